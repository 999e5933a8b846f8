# TF32 as an opt-in (docs/operators.md, "TF32"): op.matmul / batch_matmul / dense with
# allow_tf32=True multiply float32 operands rounded to tf32 (ts.round_tf32: 10 mantissa bits,
# nearest, ties away from zero), accumulating in float32. The product means the same everywhere:
# the reference interpreter, LLVM on the CPU, CUDA cores, and on sm_80+ the tensor cores, where the
# default schedule runs it (mma.m16n8k8 tf32, B k-major or n-major) at any shape, checked in the
# SPMD interpreter against numpy's tf32-rounded product and compiled by NVRTC.

import numpy as np
import pytest

import tessel as ts
from tessel import op

SM90 = "cuda -arch=sm_90"


def tf32(x):
    """numpy's float32 rounded as cvt.rna.tf32.f32 does."""
    u = np.asarray(x, np.float32).view(np.uint32).copy()
    finite = (u & 0x7F800000) != 0x7F800000
    u[finite] = (u[finite] + 0x1000) & 0xFFFFE000
    return u.view(np.float32)


def uniform(shape, seed):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


def product(kind, shape_a, shape_b, allow_tf32=True, **kw):
    a = ts.placeholder(shape_a, name="a")
    b = ts.placeholder(shape_b, name="b")
    fn = {"matmul": op.matmul, "batch_matmul": op.batch_matmul}[kind]
    return a, b, fn(a, b, allow_tf32=allow_tf32, **kw)


def reference(va, vb, transpose_b=False):
    vb = np.swapaxes(vb, -1, -2) if transpose_b else vb
    return np.matmul(tf32(va).astype(np.float64), tf32(vb).astype(np.float64))


def check_on_tensor_cores(kind, shape_a, shape_b, transpose_b=False):
    a, b, y = product(kind, shape_a, shape_b, transpose_b=transpose_b)
    s = op.default_schedule(y, ts.Target(SM90))
    f = ts.lower(s, [a, b, y])
    assert "mma_sync" in str(f)
    va, vb = uniform(shape_a, 0), uniform(shape_b, 1)
    ref = reference(va, vb, transpose_b)
    out = np.full(ref.shape, np.nan, np.float32)
    f.run(va, vb, out)
    # float32 accumulation of exact tf32 products: float32's error, not tf32's (1e-3)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5 * np.sqrt(shape_a[-1]))
    # ... and it is tf32's product: the plain float32 product differs by far more
    plain = np.matmul(va.astype(np.float64),
                      (np.swapaxes(vb, -1, -2) if transpose_b else vb).astype(np.float64))
    assert np.abs(out - plain).max() > 1e-4
    ptx = ts.build(s, [a, b, y], target=SM90).get_source("ptx")
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in ptx
    # A's fragments (and B's when read n x k) by ldmatrix: a row of 4 floats is one of 8 halves
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
    if transpose_b:
        assert "ldmatrix.sync.aligned.m8n8.x2.shared.b16" in ptx
    if shape_a[-1] > 32:  # more than one k tile: copied ahead by cp.async
        assert "cp.async" in ptx
    return s, [a, b, y]


@pytest.mark.parametrize("m,n,k", [(128, 128, 64), (100, 70, 48), (37, 50, 33), (16, 16, 16)],
                         ids=str)
def test_matmul_runs_on_tf32_tensor_cores_at_any_shape(m, n, k):
    check_on_tensor_cores("matmul", (m, k), (k, n))


@pytest.mark.parametrize("shape_a,shape_b", [((64, 48), (32, 48)), ((2, 37, 33), (2, 50, 33))],
                         ids=str)
def test_b_read_n_major(shape_a, shape_b):
    kind = "batch_matmul" if len(shape_a) == 3 else "matmul"
    check_on_tensor_cores(kind, shape_a, shape_b, transpose_b=True)


def test_batch_matmul_and_split_k():
    check_on_tensor_cores("batch_matmul", (3, 40, 48), (3, 48, 24))
    # a 64 x 64 output cannot fill an H200's SMs: the reduction splits into parts, each part a
    # tf32 product, summed by a second kernel
    s, args = check_on_tensor_cores("matmul", (64, 1000), (1000, 64))
    assert ts.build(s, args, target=SM90).get_source("cu").count("__global__") == 2


def test_dense_with_bias_and_gelu():
    x, w = ts.placeholder((37, 80), name="x"), ts.placeholder((24, 80), name="w")
    bias = ts.placeholder((24,), name="bias")
    y = op.dense(x, w, bias, activation="gelu", allow_tf32=True)
    s = op.default_schedule(y, ts.Target(SM90))
    f = ts.lower(s, [x, w, bias, y])
    assert "mma_sync" in str(f)
    vx, vw, vbias = uniform((37, 80), 2), uniform((24, 80), 3), uniform((24,), 4)
    r = reference(vx, vw, transpose_b=True) + vbias
    from math import erf
    r = 0.5 * r * (1 + np.vectorize(erf)(r / np.sqrt(2)))
    out = np.full(r.shape, np.nan, np.float32)
    f.run(vx, vw, vbias, out)
    np.testing.assert_allclose(out, r, rtol=1e-5, atol=1e-5)


def test_off_by_default_and_ignored_by_other_types():
    """Without allow_tf32 float32 stays float32 on the CUDA cores; float16 and integer products
    ignore the flag (their DAG is the plain one)."""
    a, b, y = product("matmul", (64, 64), (64, 64), allow_tf32=False)
    assert "round_tf32" not in str(y.op.body)
    lowered = str(ts.lower(op.default_schedule(y, ts.Target(SM90)), [a, b, y]))
    assert "mma_sync" not in lowered
    for dtype in ("float16", "int8"):
        a = ts.placeholder((32, 32), dtype=dtype, name="a")
        b = ts.placeholder((32, 32), dtype=dtype, name="b")
        with_flag = op.matmul(a, b, allow_tf32=True)
        assert str(with_flag.op.body) == str(op.matmul(a, b).op.body)
    # sm_75 has no tf32 tensor cores: the CUDA cores compute the rounded product
    a, b, y = product("matmul", (48, 40), (40, 24))
    f = ts.lower(op.default_schedule(y, ts.Target("cuda -arch=sm_75")), [a, b, y])
    assert "mma_sync" not in str(f)
    va, vb = uniform((48, 40), 5), uniform((40, 24), 6)
    out = np.full((48, 24), np.nan, np.float32)
    f.run(va, vb, out)
    np.testing.assert_allclose(out, reference(va, vb), rtol=1e-5, atol=1e-5)


def test_round_tf32_everywhere_agrees_with_the_hardware_rule():
    """ts.round_tf32 in the interpreter, on the CPU (LLVM) and in CUDA C: ties away from zero,
    infinities and NaN kept, the largest floats rounding up to infinity."""
    special = np.array([0.0, -0.0, 1.0, 1 + 2.0 ** -11, 1 + 2.0 ** -10 + 2.0 ** -11,
                        -(1 + 2.0 ** -11), 1 + 2.0 ** -12, np.inf, -np.inf, np.nan,
                        np.finfo(np.float32).max, 1e-40, 3.14159265], np.float32)
    n = special.size
    x = ts.placeholder((n,), name="x")
    y = ts.compute((n,), lambda i: ts.round_tf32(x[i]), name="y")
    want = tf32(special)
    assert want[3] == np.float32(1 + 2.0 ** -10) and want[6] == 1.0  # ties away, below half
    assert want[10] == np.inf
    s = ts.create_schedule(y)
    out = np.zeros(n, np.float32)
    ts.lower(s, [x, y]).run(special, out)
    np.testing.assert_array_equal(out, want)
    if "llvm" in ts.targets():
        out[:] = 0
        ts.build(s, [x, y], target="llvm")(special, out)
        np.testing.assert_array_equal(out, want)
    cu = ts.build(op.default_schedule(y, ts.Target(SM90)), [x, y], target=SM90).get_source("cu")
    assert "tsl_round_tf32" in cu
    with pytest.raises(ts.DSLError, match="float32"):
        ts.round_tf32(ts.placeholder((4,), dtype="float16", name="h")[0])


def test_the_cpu_computes_the_same_product():
    if "llvm" not in ts.targets():
        pytest.skip("needs the LLVM backend")
    a, b, y = product("matmul", (33, 40), (40, 17))
    m = ts.build(op.default_schedule(y, ts.Target("llvm")), [a, b, y], target="llvm")
    va, vb = uniform((33, 40), 7), uniform((40, 17), 8)
    out = np.zeros((33, 17), np.float32)
    m(va, vb, out)
    np.testing.assert_allclose(out, reference(va, vb), rtol=1e-5, atol=1e-5)
