# Arrays: numpy interop (dtypes, non-contiguous input, offsets, copies, lifetimes) and DLPack
# both ways with the deleter run exactly once.
import gc
import re
import sys

import numpy as np
import pytest

import tessel as ts
from util import rand, requires_llvm

DTYPES = ["float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16",
          "uint32", "uint64", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtype_round_trip(dtype):
    x = (np.arange(12).reshape(3, 4) % 2 == 0) if dtype == "bool" else np.arange(12, dtype=dtype).reshape(3, 4)
    for copy in (None, True):
        a = ts.nd.array(x, copy=copy)
        assert a.dtype == dtype and a.shape == (3, 4) and a.ndim == 2 and a.size == 12
        np.testing.assert_array_equal(a.numpy(), x)
        assert a.numpy().dtype == np.dtype(dtype)


def test_dtype_argument_converts():
    a = ts.nd.array([[1, 2], [3, 4]], dtype="float32")
    assert a.dtype == "float32" and a.numpy().tolist() == [[1, 2], [3, 4]]


def test_zero_copy_wrap_shares_memory():
    x = np.zeros(8, "float32")
    a = ts.nd.array(x, copy=False)
    assert a.data_ptr == x.ctypes.data
    x[3] = 5
    assert a.numpy()[3] == 5
    b = ts.nd.array(x, copy=True)
    assert b.data_ptr != x.ctypes.data
    x[3] = 6
    assert b.numpy()[3] == 5


def test_offsets_and_strides_are_honoured():
    base = np.arange(60, dtype="float32").reshape(6, 10)
    view = base[1:5, 2:9:3]  # an offset and a stride
    a = ts.nd.array(view, copy=False)
    assert a.data_ptr == view.ctypes.data
    assert a.strides == (10, 3) and not a.is_contiguous
    np.testing.assert_array_equal(a.numpy(), view)


def test_layouts_that_cannot_be_wrapped_are_copied():
    x = np.arange(10, dtype="float32")[::-1]  # negative stride
    with pytest.raises(ValueError, match="without copying"):
        ts.nd.array(x, copy=False)
    np.testing.assert_array_equal(ts.nd.array(x).numpy(), x)
    y = np.arange(6, dtype=">i4")  # non-native byte order
    np.testing.assert_array_equal(ts.nd.array(y).numpy(), y)
    rec = np.zeros(4, dtype=[("a", "<f4"), ("b", "<i4")])["a"]  # stride 8, element 4: fine
    assert ts.nd.array(rec, copy=False).strides == (2,)


@requires_llvm
def test_non_contiguous_kernel_arguments():
    A = ts.placeholder((4, 5), name="A")
    B = ts.compute((4, 5), lambda i, j: A[i, j] * 3, name="B")
    f = ts.build(ts.create_schedule(B), [A, B])
    big = rand(8, 10)
    a = big[::2, ::2]  # non-contiguous input: copied for the call
    out_big = np.zeros((8, 10), "float32")
    b = out_big[1::2, 1::2]  # non-contiguous output: written back
    f(a, b)
    np.testing.assert_allclose(b, a * 3)
    assert out_big[0].sum() == 0  # nothing outside the view was touched
    f(np.asfortranarray(rand(4, 5)), np.zeros((4, 5), "float32"))
    ro = np.zeros((4, 5), "float32")
    ro.flags.writeable = False
    with pytest.raises(ts.TesselRuntimeError, match="read-only"):
        f(rand(4, 5), ro)
    with pytest.raises(TypeError):
        f([1, 2], ro)


def test_wrapped_numpy_array_outlives_its_python_name():
    x = np.arange(1000, dtype="float64")
    before = sys.getrefcount(x)
    a = ts.nd.array(x, copy=False)
    assert sys.getrefcount(x) == before + 1
    del x
    gc.collect()
    np.testing.assert_array_equal(a.numpy(), np.arange(1000))


def test_numpy_view_keeps_ndarray_alive():
    a = ts.nd.array(np.arange(5, dtype="int32"), copy=True)
    v = np.asarray(a.__array__(copy=False))
    del a
    gc.collect()
    assert v.tolist() == [0, 1, 2, 3, 4]


def test_empty_and_copyfrom():
    a = ts.nd.empty((2, 3), dtype="int32")
    a.copyfrom(np.ones((2, 3)))
    assert a.numpy().tolist() == [[1, 1, 1], [1, 1, 1]]
    assert str(a.device) == "cpu:0" and a.device == ts.cpu()
    assert "shape=(2, 3)" in repr(a)
    b = ts.nd.array(a)
    assert b.data_ptr == a.data_ptr
    c = ts.nd.array(a, copy=True)
    assert c.data_ptr != a.data_ptr


@pytest.mark.skipif(ts.cuda_available(), reason="a CUDA device is present (test_cuda.py)")
def test_cuda_without_a_device_is_an_error():
    with pytest.raises(RuntimeError, match=re.escape(ts.cuda_unavailable_reason())):
        ts.nd.empty((2,), device="cuda")


def test_dlpack_to_numpy_is_zero_copy_and_releases_once():
    a = ts.nd.array(np.arange(6, dtype="float32"), copy=True)
    x = np.from_dlpack(a)
    assert x.ctypes.data == a.data_ptr
    del a
    gc.collect()
    assert x.tolist() == [0, 1, 2, 3, 4, 5]  # x keeps the memory alive


def test_dlpack_from_numpy_deleter_runs_exactly_once():
    x = np.arange(12, dtype="int64").reshape(3, 4)
    base = sys.getrefcount(x)
    t = ts.nd.from_dlpack(x)
    assert t.data_ptr == x.ctypes.data and t.shape == (3, 4) and t.dtype == "int64"
    assert sys.getrefcount(x) > base
    del t
    gc.collect()
    assert sys.getrefcount(x) == base  # released once: not leaked, not released twice


def test_unconsumed_capsule_runs_the_deleter():
    x = np.arange(4, dtype="float32")
    base = sys.getrefcount(x)
    cap = x.__dlpack__()
    del cap
    gc.collect()
    assert sys.getrefcount(x) == base
    a = ts.nd.array(np.arange(4, dtype="float32"), copy=True)
    cap = a.__dlpack__()
    del cap, a  # our own capsule, never consumed: the deleter frees the view
    gc.collect()


def test_capsule_is_consumed_once():
    x = np.arange(4, dtype="float32")
    cap = x.__dlpack__()
    t = ts.nd.from_dlpack(cap)
    with pytest.raises(ValueError, match="consumed"):
        ts.nd.from_dlpack(cap)
    assert t.numpy().tolist() == [0, 1, 2, 3]


def test_dlpack_device_and_copy():
    a = ts.nd.array(np.arange(3, dtype="float32"), copy=True)
    assert a.__dlpack_device__() == (1, 0)
    y = np.from_dlpack(a, copy=True) if np.lib.NumpyVersion(np.__version__) >= "2.1.0" else np.from_dlpack(a).copy()
    assert y.ctypes.data != a.data_ptr


@requires_llvm
def test_kernel_accepts_dlpack_objects():
    torch = pytest.importorskip("torch")
    A = ts.placeholder((8,), name="A")
    B = ts.compute((8,), lambda i: A[i] * 2, name="B")
    f = ts.build(ts.create_schedule(B), [A, B])
    a = torch.arange(8, dtype=torch.float32)
    b = torch.zeros(8, dtype=torch.float32)
    f(a, b)
    assert b.tolist() == [2.0 * i for i in range(8)]
    t = torch.from_dlpack(ts.nd.array(np.arange(3, dtype="float32"), copy=True))
    assert t.tolist() == [0.0, 1.0, 2.0]
