# bfloat16 arrays in numpy: ml_dtypes' bfloat16 (the dtype JAX uses) into and out of tessel
# bit-exactly, float32 converted with round-to-nearest-even, bfloat16 kernels called with ml_dtypes
# arrays, and the errors for a dtype tessel lacks or a missing ml_dtypes.
import sys

import numpy as np
import pytest

import tessel as ts
from util import requires_llvm

# A dependency of tessel (pyproject.toml), installed by scripts/test.sh; a Python without it (the
# GPU host's) skips this file.
ml_dtypes = pytest.importorskip("ml_dtypes")

BF16 = np.dtype(ml_dtypes.bfloat16)

# 1, -2, the largest finite, the smallest normal, a subnormal, +-0, +-inf and a quiet NaN.
SPECIAL_BITS = [0x3F80, 0xC000, 0x7F7F, 0x0080, 0x0001, 0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0]


def bf16_of_bits(bits):
    return np.array(bits, dtype=np.uint16).view(BF16)


def bits_of(x):
    return np.asarray(x).view(np.uint16)


@pytest.mark.parametrize("copy", [None, True])
def test_ml_dtypes_array_round_trips_bit_exactly(copy):
    x = bf16_of_bits(SPECIAL_BITS * 2).reshape(4, 5)
    a = ts.nd.array(x, copy=copy)
    assert a.dtype == "bfloat16" and a.shape == (4, 5)
    assert (a.data_ptr == x.ctypes.data) == (copy is None)  # wrapped unless a copy is asked for
    y = a.numpy()
    assert y.dtype == BF16
    np.testing.assert_array_equal(bits_of(y), bits_of(x))
    assert y.ctypes.data != a.data_ptr  # .numpy() copies


def test_ml_dtypes_view_keeps_strides():
    base = bf16_of_bits(np.arange(0x3F80, 0x3F80 + 60)).reshape(6, 10)
    view = base[1:5, 2:9:3]
    a = ts.nd.array(view, copy=False)
    assert a.data_ptr == view.ctypes.data and a.strides == (10, 3)
    np.testing.assert_array_equal(bits_of(a.numpy()), bits_of(view))


def test_float32_converts_rounding_to_nearest_even():
    ties = [1 + 2**-8, 1 + 3 * 2**-8, -(1 + 5 * 2**-8)]  # halfway: to the even neighbour
    near = [1 + 2**-8 + 2**-20, 1 + 2**-8 - 2**-20, 3.14159265, 1e30, -7e-30, 65504.0]
    x = np.array(ties + near + [np.inf, 0.0, -0.0], dtype=np.float32)
    for dtype in ("bfloat16", ml_dtypes.bfloat16, BF16):
        a = ts.nd.array(x, dtype=dtype)
        assert a.dtype == "bfloat16"
        np.testing.assert_array_equal(bits_of(a.numpy()), bits_of(x.astype(BF16)))
    assert bits_of(ts.nd.array(x[:3], dtype="bfloat16").numpy()).tolist() == [0x3F80, 0x3F82, 0xBF82]
    # A list converts through numpy the same way.
    assert bits_of(ts.nd.array([1.0, -2.0], dtype="bfloat16").numpy()).tolist() == [0x3F80, 0xC000]


def test_empty_copyfrom_and_the_array_protocol():
    a = ts.nd.empty((2, 3), "bfloat16")
    assert a.dtype == "bfloat16" and a.numpy().dtype == BF16
    assert ts.nd.empty(4, ml_dtypes.bfloat16).dtype == "bfloat16"
    x = np.array([[1.5, -2.25, 1 + 2**-8], [0.1, 100.0, -0.0]], dtype=np.float32)
    a.copyfrom(x)  # converted (rounded) to bfloat16
    ref = x.astype(BF16)
    np.testing.assert_array_equal(bits_of(a.numpy()), bits_of(ref))
    for y in (np.asarray(a), a.__array__(copy=False)):
        assert y.dtype == BF16
        np.testing.assert_array_equal(bits_of(y), bits_of(ref))
    assert a.__array__(copy=False).ctypes.data == a.data_ptr  # a view of the NDArray's memory
    as_f32 = np.asarray(a, dtype=np.float32)
    np.testing.assert_array_equal(as_f32, ref.astype(np.float32))
    back = ts.nd.array(a, dtype="float32")  # tessel bfloat16 -> float32: exact
    assert back.dtype == "float32"
    np.testing.assert_array_equal(back.numpy(), ref.astype(np.float32))


def test_other_ml_dtypes_are_a_type_error():
    f8 = np.zeros(4, dtype=ml_dtypes.float8_e4m3fn)
    with pytest.raises(TypeError, match="float8_e4m3fn has no tessel equivalent"):
        ts.nd.array(f8)
    with pytest.raises(TypeError, match="float8_e4m3fn"):
        ts.nd.empty((2,), ml_dtypes.float8_e4m3fn)
    with pytest.raises(TypeError, match="float8_e4m3fn"):
        ts.nd.array(np.zeros(2, np.float32), dtype=ml_dtypes.float8_e4m3fn)
    with pytest.raises(TypeError, match="has no tessel equivalent"):
        ts.nd.array(np.zeros(3, dtype="V2"))  # a void dtype of bfloat16's size is not one


def test_without_ml_dtypes_a_bfloat16_numpy_array_is_an_import_error(monkeypatch):
    a = ts.nd.array(bf16_of_bits([0x3F80, 0xC000]))
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # `import ml_dtypes` now fails
    b = ts.nd.empty((2,), "bfloat16")  # no numpy array involved: fine
    assert b.dtype == "bfloat16"
    for numpy_wanted in (a.numpy, lambda: np.asarray(a),
                         lambda: ts.nd.array([1.0], dtype="bfloat16")):
        with pytest.raises(ImportError, match="pip install ml_dtypes"):
            numpy_wanted()


# --- Kernels: bfloat16 parameters take ml_dtypes arrays as float32 parameters take numpy's.

def random_bf16(n, seed):
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
    x[:2] = [2.0**-130, -(2.0**-128)]  # subnormals: rounded, never flushed to zero
    return x.astype(BF16)


@requires_llvm
def test_bfloat16_add_kernel_takes_ml_dtypes_arrays():
    n = 64
    A = ts.placeholder((n,), name="A", dtype="bfloat16")
    B = ts.placeholder((n,), name="B", dtype="bfloat16")
    C = ts.compute((n,), lambda i: A[i] + B[i], name="C")
    f = ts.build(ts.create_schedule(C), [A, B, C], target="llvm")
    for seed in range(3):  # the first call checks everything, the next ones hit the call cache
        a, b = random_bf16(n, seed), random_bf16(n, seed + 10)
        c = np.zeros(n, BF16)
        f(a, b, c)  # the output is written in place
        ref = (a.astype(np.float32) + b.astype(np.float32)).astype(BF16)  # float32, rounded back
        np.testing.assert_array_equal(bits_of(c), bits_of(ref))
    # A strided output is computed in a temporary and copied back; the rest is left alone.
    a, b = random_bf16(n, 7), random_bf16(n, 8)
    out = np.zeros(2 * n, BF16)
    f(a, b, out[::2])
    ref = (a.astype(np.float32) + b.astype(np.float32)).astype(BF16)
    np.testing.assert_array_equal(bits_of(out[::2]), bits_of(ref))
    assert not bits_of(out[1::2]).any()
    # tessel NDArrays and ml_dtypes arrays mix.
    c = ts.nd.empty((n,), "bfloat16")
    f(ts.nd.array(a), b, c)
    np.testing.assert_array_equal(bits_of(c.numpy()), bits_of(ref))


@requires_llvm
def test_bfloat16_kernel_rejects_other_dtypes_by_name():
    A = ts.placeholder((8,), name="A", dtype="bfloat16")
    B = ts.compute((8,), lambda i: A[i] * 2, name="B")
    f = ts.build(ts.create_schedule(B), [A, B], target="llvm")
    a, b = random_bf16(8, 0), np.zeros(8, BF16)
    f(a, b)  # cache the bfloat16 call first: a float32 array must not hit it
    with pytest.raises(ts.TesselRuntimeError, match="'B'.*expected dtype bfloat16, got float32"):
        f(a, np.zeros(8, np.float32))
    with pytest.raises(ts.TesselRuntimeError, match="'A'.*expected dtype bfloat16, got float16"):
        f(np.zeros(8, np.float16), b)
    with pytest.raises(TypeError, match="float8_e4m3fn has no tessel equivalent"):
        f(a, np.zeros(8, ml_dtypes.float8_e4m3fn))
    X = ts.placeholder((8,), name="X")
    Y = ts.compute((8,), lambda i: X[i] + 1, name="Y")
    g = ts.build(ts.create_schedule(Y), [X, Y], target="llvm")
    with pytest.raises(ts.TesselRuntimeError, match="'X'.*expected dtype float32, got bfloat16"):
        g(a, np.zeros(8, np.float32))


@requires_llvm
@pytest.mark.parametrize("target", ["llvm", "llvm -mcpu=x86-64"])  # with and without AVX512-BF16
def test_cast_kernel_rounds_float32_like_ml_dtypes(target):
    n = 256
    X = ts.placeholder((n,), name="X")
    Y = ts.compute((n,), lambda i: X[i].astype("bfloat16"), name="Y")
    s = ts.create_schedule(Y)
    s[Y].vectorize(s[Y].split(Y.op.axis[0], 16)[1])
    f = ts.build(s, [X, Y], target=target)
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32) * 1000
    x[:4] = [1 + 2**-8, 1 + 3 * 2**-8, -(1 + 5 * 2**-8), 1 + 2**-8 + 2**-20]  # ties and near
    # Subnormals (rounded as any value, whatever the CPU's bfloat16 instructions do), a tie
    # between subnormals, infinities and a NaN (kept a quiet NaN).
    x[4:10] = [2.0**-130, -3 * 2.0**-134, 3 * 2.0**-134 / 2, np.inf, -np.inf, np.nan]
    y = np.zeros(n, BF16)
    f(x, y)
    np.testing.assert_array_equal(bits_of(y), bits_of(x.astype(BF16)))
    assert bits_of(y[:4]).tolist() == [0x3F80, 0x3F82, 0xBF82, 0x3F81]
    assert bits_of(y[4:6]).tolist() == [0x0008, 0x8002]  # 8 quanta; a tie between 1 and 2


@requires_llvm
@pytest.mark.parametrize("lanes", [16, 17, 3])
def test_bfloat16_vectors_of_any_lane_count(lanes):
    # bfloat16 vectors are their bits in LLVM (docs/codegen.md): a <17 x bfloat> copy or compare
    # would not compile.
    n = 4 * lanes
    A = ts.placeholder((n,), name="A", dtype="bfloat16")
    B = ts.compute((n,), lambda i: ts.if_then_else(A[i] > 0, A[i], A[i] * 0.5), name="B")
    C = ts.compute((n,), lambda i: A[i], name="C")
    s = ts.create_schedule([B, C])
    for t in (B, C):
        s[t].vectorize(s[t].split(t.op.axis[0], lanes)[1])
    f = ts.build(s, [A, B, C], target="llvm")
    a = random_bf16(n, 3)
    b, c = np.zeros(n, BF16), np.zeros(n, BF16)
    f(a, b, c)
    af = a.astype(np.float32)
    np.testing.assert_array_equal(bits_of(b), bits_of(np.where(af > 0, af, af * 0.5).astype(BF16)))
    np.testing.assert_array_equal(bits_of(c), bits_of(a))
