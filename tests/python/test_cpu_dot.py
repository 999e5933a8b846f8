# The CPU's dot-product instructions through tensorize (docs/schedule.md, "The CPU's dot-product
# instructions"): the documented uint8 x int8 GEMM and its bfloat16 twin against numpy, with the
# instruction in the code where this CPU has it.
import numpy as np
import pytest

import tessel as ts
from util import requires_llvm

ml_dtypes = pytest.importorskip("ml_dtypes")


def packed_gemm(m, n, k, a_dtype, b_dtype, acc, lanes, group, intrin):
    A = ts.placeholder((m, k), dtype=a_dtype, name="A")
    B = ts.placeholder((k, n), dtype=b_dtype, name="B")
    Bp = ts.compute((n // lanes, k // group, lanes, group),
                    lambda jo, ko, j, q: B[ko * group + q, jo * lanes + j], name="Bp")
    r = ts.reduce_axis((0, k), name="r")
    C = ts.compute((m, n), lambda i, j: ts.sum(
        A[i, r].astype(acc) * Bp[j // lanes, r // group, j % lanes, r % group].astype(acc),
        axis=r), name="C")
    s = ts.create_schedule(C)
    jo, ji = s[C].split(C.op.axis[1], lanes)
    ko, ki = s[C].split(C.op.reduce_axis[0], group)
    s[C].reorder(C.op.axis[0], jo, ko, ji, ki)
    s[C].tensorize(ji, intrin)
    return s, [A, B, C]


@requires_llvm
@pytest.mark.parametrize("intrin,lanes", [("dot_16x4_u8s8", 16), ("dot_8x4_u8s8", 8)])
def test_uint8_int8_gemm(intrin, lanes):
    m, n, k = 7, 3 * lanes, 36
    s, args = packed_gemm(m, n, k, "uint8", "int8", "int32", lanes, 4, intrin)
    assert f"dot_product({lanes}, 4," in str(ts.lower(s, args))
    f = ts.build(s, args, target="llvm")
    rng = np.random.default_rng(4)
    a = rng.integers(0, 256, (m, k)).astype(np.uint8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    c = np.zeros((m, n), np.int32)
    f(a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
    has = ts.Target("llvm").has_feature
    if has("avx512vnni") and (lanes == 16 or has("avx512vl")) or (lanes == 8 and has("avxvnni")):
        assert "vpdpbusd" in f.get_source("asm")


@requires_llvm
def test_bfloat16_gemm():
    m, n, k = 5, 32, 38
    s, args = packed_gemm(m, n, k, "bfloat16", "bfloat16", "float32", 16, 2, "dot_16x2_bf16")
    f = ts.build(s, args, target="llvm")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((m, k)).astype(np.float32).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((k, n)).astype(np.float32).astype(ml_dtypes.bfloat16)
    c = np.zeros((m, n), np.float32)
    f(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)
    if ts.Target("llvm").has_feature("avx512bf16"):
        assert "vdpbf16ps" in f.get_source("asm")


def test_the_target_says_which_features_it_has():
    assert not ts.Target("cuda -arch=sm_90").has_feature("avx512f")
    if "llvm" in ts.targets():
        assert ts.Target("llvm -mcpu=cascadelake").has_feature("avx512vnni")
        assert not ts.Target("llvm -mcpu=cascadelake -mattr=-avx512vnni").has_feature("avx512vnni")


# ---- int8 x int8 through the uint8 x int8 unit (ts.op.matmul(..., target=)) ----

VNNI = "llvm -mcpu=cascadelake"


def int8_with_extremes(shape, seed):
    """Random int8 values with -128 and 127 among them (the first two, and every fifth)."""
    x = np.random.default_rng(seed).integers(-128, 128, shape).astype(np.int8)
    flat = x.reshape(-1)
    flat[0], flat[1] = -128, 127
    flat[5::10], flat[10::10] = -128, 127
    return x


def plain_int32(a, b):
    """The plain product in int64, wrapped to int32 as the IR's int32 sums wrap."""
    return (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)


@requires_llvm
@pytest.mark.parametrize("m,n,k,ta,tb", [(13, 48, 20, False, False), (9, 35, 27, True, False),
                                         (7, 32, 36, False, True), (1, 16, 4, True, True)])
def test_int8_matmul_on_vnni_is_the_plain_product_exactly(m, n, k, ta, tb):
    A = ts.placeholder((k, m) if ta else (m, k), dtype="int8", name="a")
    B = ts.placeholder((n, k) if tb else (k, n), dtype="int8", name="b")
    C = ts.op.matmul(A, B, transpose_a=ta, transpose_b=tb, target=VNNI)
    names = {st.name for st in ts.create_schedule(C).stages}
    assert {"matmul.a_shift", "matmul.b_sum", "matmul.dot"} <= names
    a, b = int8_with_extremes(A.shape, 1), int8_with_extremes(B.shape, 2)
    c = np.zeros((m, n), np.int32)
    f = ts.build(ts.op.default_schedule(C, VNNI), [A, B, C], target="llvm")
    f(a, b, c)
    np.testing.assert_array_equal(c, plain_int32(a.T if ta else a, b.T if tb else b))
    # All -128 against all -128 at the longest K: every sum is 128 * 128 * K.
    f(np.full(A.shape, -128, np.int8), np.full(B.shape, -128, np.int8), c)
    np.testing.assert_array_equal(c, np.full((m, n), 128 * 128 * k, np.int32))


@requires_llvm
def test_int8_dense_and_batch_matmul_on_vnni_and_the_plain_path_elsewhere():
    X = ts.placeholder((11, 24), dtype="int8", name="x")
    W = ts.placeholder((32, 24), dtype="int8", name="w")
    Y = ts.op.dense(X, W, target=ts.Target(VNNI))
    x, w = int8_with_extremes(X.shape, 3), int8_with_extremes(W.shape, 4)
    y = np.zeros((11, 32), np.int32)
    ts.build(ts.op.default_schedule(Y, VNNI), [X, W, Y], target="llvm")(x, w, y)
    np.testing.assert_array_equal(y, plain_int32(x, w.T))
    A3 = ts.placeholder((3, 5, 8), dtype="int8", name="a")
    B3 = ts.placeholder((1, 8, 16), dtype="int8", name="b")
    C3 = ts.op.batch_matmul(A3, B3, target=VNNI)
    a3, b3 = int8_with_extremes(A3.shape, 5), int8_with_extremes(B3.shape, 6)
    c3 = np.zeros((3, 5, 16), np.int32)
    ts.build(ts.op.default_schedule(C3, VNNI), [A3, B3, C3], target="llvm")(a3, b3, c3)
    np.testing.assert_array_equal(
        c3, (a3.astype(np.int64) @ b3.astype(np.int64)).astype(np.int32))
    # No VNNI, no target, a GPU: the plain product, one stage.
    for target in ("llvm -mcpu=skylake-avx512", None, "cuda -arch=sm_90"):
        C = ts.op.matmul(X, W, transpose_b=True, target=target)
        assert len(ts.create_schedule(C).stages) == 3, target


# ---- the tuner's dot-product sketch (multi_level_tiling_cpu_dot) ----

def u8s8_task(m, n, k, target=VNNI + " -num-cores=2"):
    A = ts.placeholder((m, k), dtype="uint8", name="a")
    B = ts.placeholder((k, n), dtype="int8", name="b")
    C = ts.op.matmul(A, B)
    return ts.SearchTask(dag=ts.make_tensor_dag([C]), target=target), (A, B, C)


def test_the_tuner_tiles_u8s8_on_the_dot_unit_where_the_cpu_has_one():
    A = ts.auto_schedule
    if "llvm" not in ts.targets():
        pytest.skip("CPU names imply features only with LLVM")
    assert "multi_level_tiling_cpu_dot" in A.builtin_sketch_rules(VNNI)
    assert "multi_level_tiling_cpu_dot" not in A.builtin_sketch_rules("llvm -mcpu=skylake-avx512")
    task, _ = u8s8_task(64, 64, 32)
    space = A.SearchSpace(task)
    assert [k.trace for k in space.sketches] == [["matmul.local: multi_level_tiling_cpu_dot"]]
    assert space.sketches[0].stage_kinds == [
        "placeholder", "placeholder", "cpu_dot_pack", "cpu_dot", "cpu_dot_output"]
    plain, _ = u8s8_task(64, 64, 32, "llvm -mcpu=skylake-avx512 -num-cores=2")
    assert not any("cpu_dot" in " ".join(k.trace) for k in A.generate_sketches(plain))


@requires_llvm
def test_sampled_dot_states_compute_the_product_exactly():
    task, _ = u8s8_task(36, 48, 20)
    args = list(task.dag.inputs) + list(task.dag.outputs)
    space = ts.auto_schedule.SearchSpace(task)
    rng = np.random.default_rng(7)
    a = rng.integers(0, 256, (36, 20)).astype(np.uint8)
    b = int8_with_extremes((20, 48), 8)
    want = a.astype(np.int64) @ b.astype(np.int64)
    states = space.sample(4, seed=5)["states"]
    assert len(states) == 4
    for s in states:
        assert "dot_16x4_u8s8" in s.to_python()
        c = np.zeros((36, 48), np.int32)
        ts.lower(s.schedule, args).run(a, b, c)  # the loop interpreter
        np.testing.assert_array_equal(c, want)
        c[:] = 0
        ts.build(s.schedule, args, target="llvm")(a, b, c)
        np.testing.assert_array_equal(c, want)
