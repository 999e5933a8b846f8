# Low precision accumulates wide (docs/operators.md, "Low precision"): float16/bfloat16 operators
# against float64 numpy references on odd shapes, int8 products exactly, out_dtype and
# ts.sum(dtype=), and their errors.
import numpy as np
import pytest

import tessel as ts
from util import HAVE_LLVM

ml_dtypes = pytest.importorskip("ml_dtypes")
op = ts.op
pytestmark = pytest.mark.skipif(not HAVE_LLVM, reason="tessel was built without LLVM")

NP = {"float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16),
      "float32": np.dtype(np.float32), "int8": np.dtype(np.int8), "uint8": np.dtype(np.uint8),
      "int32": np.dtype(np.int32), "int64": np.dtype(np.int64)}


def run_default(inputs, arrays, output):
    """`output` under its default CPU schedule, run on `arrays`; the result as numpy."""
    f = ts.build(op.default_schedule([output], "llvm"), list(inputs) + [output], target="llvm")
    out = np.zeros([int(d) for d in output.shape], NP[output.dtype])
    f(*arrays, out)
    return out


def rel_l2(got, ref):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    return np.linalg.norm(got - ref) / np.linalg.norm(ref)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_matmul_of_16_bit_floats_is_as_accurate_as_float32_accumulation(dtype):
    rng = np.random.default_rng(55)
    m, n, k = 7, 13, 4096
    a = rng.standard_normal((m, k)).astype(np.float32).astype(NP[dtype])
    b = rng.standard_normal((k, n)).astype(np.float32).astype(NP[dtype])
    A, B = ts.placeholder((m, k), dtype=dtype, name="A"), ts.placeholder((k, n), dtype=dtype,
                                                                          name="B")
    C = op.matmul(A, B)
    assert C.dtype == dtype
    got = run_default([A, B], [a, b], C)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    f32 = (a.astype(np.float32) @ b.astype(np.float32)).astype(NP[dtype])
    assert rel_l2(got, ref) <= 1.1 * rel_l2(f32, ref)
    wide = op.matmul(A, B, out_dtype="float32")
    assert wide.dtype == "float32"
    assert rel_l2(run_default([A, B], [a, b], wide), ref) < 1e-5


def test_a_float16_sum_of_4096_ones_is_4096():
    # In float16, 2048 + 1 is 2048: a float16 accumulator stops there.
    X = ts.placeholder((3, 4096), dtype="float16", name="X")
    got = run_default([X], [np.ones((3, 4096), np.float16)], op.sum(X, axis=1))
    assert got.dtype == np.float16 and got.tolist() == [4096.0] * 3


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_softmax_and_layer_norm_compute_in_float32(dtype):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((3, 1031)) * 4).astype(np.float32).astype(NP[dtype])
    g = rng.uniform(0.5, 1.5, 1031).astype(np.float32).astype(NP[dtype])
    beta = rng.standard_normal(1031).astype(np.float32).astype(NP[dtype])
    X = ts.placeholder(x.shape, dtype=dtype, name="X")
    G = ts.placeholder((1031,), dtype=dtype, name="G")
    Bt = ts.placeholder((1031,), dtype=dtype, name="Bt")
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(axis=1, keepdims=True))
    soft_ref = e / e.sum(axis=1, keepdims=True)
    x32 = x.astype(np.float32)
    e32 = np.exp(x32 - x32.max(axis=1, keepdims=True))
    soft32 = (e32 / e32.sum(axis=1, keepdims=True)).astype(NP[dtype])
    soft = run_default([X], [x], op.softmax(X))
    assert rel_l2(soft, soft_ref) <= 1.1 * rel_l2(soft32, soft_ref)

    def norm(v, gamma, shift):
        mu = v.mean(axis=1, keepdims=True)
        return (v - mu) / np.sqrt(v.var(axis=1, keepdims=True) + 1e-5) * gamma + shift

    ln_ref = norm(xd, g.astype(np.float64), beta.astype(np.float64))
    ln32 = norm(x32, g.astype(np.float32), beta.astype(np.float32)).astype(NP[dtype])
    ln = run_default([X, G, Bt], [x, g, beta], op.layer_norm(X, G, Bt))
    assert rel_l2(ln, ln_ref) <= 1.1 * rel_l2(ln32, ln_ref)


@pytest.mark.parametrize("a_dtype", ["int8", "uint8"])
def test_8_bit_products_are_exact_in_int32(a_dtype):
    rng = np.random.default_rng(8)
    m, n, k = 5, 11, 515  # 515 * 127 * 127 overflows int16, not int32
    info = np.iinfo(NP[a_dtype])
    a = rng.integers(info.min, info.max + 1, (m, k)).astype(NP[a_dtype])
    b = rng.integers(info.min, info.max + 1, (k, n)).astype(NP[a_dtype])
    A = ts.placeholder((m, k), dtype=a_dtype, name="A")
    B = ts.placeholder((k, n), dtype=a_dtype, name="B")
    C = op.matmul(A, B)
    assert C.dtype == "int32"
    got = run_default([A, B], [a, b], C)
    np.testing.assert_array_equal(got, a.astype(np.int64) @ b.astype(np.int64))
    W = ts.placeholder((n, k), dtype=a_dtype, name="W")
    D = op.dense(A, W, out_dtype="int64")
    assert D.dtype == "int64"
    w = np.ascontiguousarray(b.T)
    np.testing.assert_array_equal(run_default([A, W], [a, w], D), a.astype(np.int64) @ b)


def test_ts_sum_takes_its_accumulator():
    A = ts.placeholder((4, 4096), dtype="float16", name="A")
    k = ts.reduce_axis((0, 4096), name="k")
    S = ts.compute((4,), lambda i: ts.sum(A[i, k], axis=k, dtype="float32"), name="S")
    assert S.dtype == "float32"
    s = ts.create_schedule(S)
    f = ts.build(s, [A, S], target="llvm")
    out = np.zeros(4, np.float32)
    f(np.ones((4, 4096), np.float16), out)
    assert out.tolist() == [4096.0] * 4
    with pytest.raises(TypeError, match="cannot accumulate float16 values in bfloat16"):
        ts.compute((4,), lambda i: ts.sum(A[i, k], axis=k, dtype="bfloat16"))
    with pytest.raises(TypeError, match="dtype= is the accumulator of a reduction"):
        ts.sum(A[0, 0], A[0, 1], dtype="float32")


def test_out_dtype_errors_name_the_operator_and_parameter():
    H = ts.placeholder((4, 4), dtype="float16", name="H")
    Q = ts.placeholder((4, 4), dtype="int8", name="Q")
    with pytest.raises(TypeError, match="matmul: parameter 'out_dtype' is int32 but the operands"):
        op.matmul(H, H, out_dtype="int32")
    with pytest.raises(TypeError, match="narrower than the int32 accumulator"):
        op.dense(Q, Q, out_dtype="int8")
    with pytest.raises(TypeError, match="conv2d_nchw: parameter 'out_dtype'"):
        op.conv2d_nchw(ts.placeholder((1, 4, 3, 3), dtype="float16"),
                       ts.placeholder((2, 4, 1, 1), dtype="float16"), out_dtype="bool")


def test_workload_keys_made_before_out_dtype_name_the_same_computation():
    before = ts.SearchTask("op.matmul", [64, 64, 64, 0, 0, "float32"], target="llvm")
    spelled = ts.SearchTask("op.matmul", [64, 64, 64, 0, 0, "float32", "float32"], target="llvm")
    assert before.dag_hash == spelled.dag_hash
    half = ts.SearchTask("op.matmul", [64, 64, 64, 0, 0, "float16", "float32"], target="llvm")
    assert half.dag_hash != before.dag_hash
    assert ("out_dtype", "dtype") in ts.workload_params("op.matmul")


@pytest.mark.parametrize("dtype,layout", [("float16", "nhwc"), ("bfloat16", "nchw")])
def test_16_bit_conv_on_the_gpu_default_accumulates_in_float32(dtype, layout):
    # The GPU default's implicit GEMM (docs/operators.md) on 16-bit gathers: in the SPMD
    # interpreter, as accurate as a float32 product rounded once to the output type.
    rng = np.random.default_rng(56)
    n, c, h, w, k = 2, 37, 9, 11, 20
    x = rng.standard_normal((n, c, h, w)).astype(np.float32).astype(NP[dtype])
    wt = (rng.standard_normal((k, c, 3, 3)) / 10).astype(np.float32).astype(NP[dtype])
    xd, wd = x.astype(np.float64), wt.astype(np.float64)
    xp = np.pad(xd, ((0, 0), (0, 0), (1, 1), (1, 1)))
    oh, ow = (h - 1) // 2 + 1, (w - 1) // 2 + 1
    ref = np.zeros((n, k, oh, ow))
    for dy in range(3):
        for dx in range(3):
            ref += np.einsum("nchw,kc->nkhw", xp[:, :, dy:dy + 2 * oh:2, dx:dx + 2 * ow:2],
                             wd[:, :, dy, dx])
    if layout == "nhwc":
        X = ts.placeholder((n, h, w, c), dtype=dtype, name="x")
        W = ts.placeholder((3, 3, c, k), dtype=dtype, name="w")
        Y = op.conv2d_nhwc(X, W, stride=2, padding=1)
        args, ref = [x.transpose(0, 2, 3, 1).copy(), wt.transpose(2, 3, 1, 0).copy()], \
            ref.transpose(0, 2, 3, 1)
    else:
        X = ts.placeholder((n, c, h, w), dtype=dtype, name="x")
        W = ts.placeholder((k, c, 3, 3), dtype=dtype, name="w")
        Y = op.conv2d_nchw(X, W, stride=2, padding=1)
        args = [x, wt]
    s = op.default_schedule([Y], "cuda -arch=sm_90")
    assert "s.reindex(" in s.to_python()
    out = np.zeros([int(d) for d in Y.shape], NP[dtype])
    ts.lower(s, [X, W, Y]).run(*args, out)
    rounded = ref.astype(np.float32).astype(NP[dtype])
    assert rel_l2(out, ref) <= 1.1 * rel_l2(rounded, ref)
