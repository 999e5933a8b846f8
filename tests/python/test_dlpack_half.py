# float16 and bfloat16 through DLPack, both ways and without copying: float16 is kDLFloat with 16
# bits, bfloat16 kDLBfloat (code 4). numpy exchanges float16 but refuses bfloat16, so bfloat16 is
# checked on the capsule itself and through a producer that is not numpy; torch, where installed,
# for both (torch is not a dependency). Only the numpy bfloat16 checks need ml_dtypes.
import ctypes

import numpy as np
import pytest

import tessel as ts
from util import requires_llvm

kDLFloat, kDLBfloat = 2, 4


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def capsule_tensor(capsule):
    """The DLTensor an unconsumed "dltensor" capsule holds (read only; the capsule keeps it)."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return DLTensor.from_address(get(capsule, b"dltensor"))  # DLManagedTensor starts with it


class Producer:
    """A host tensor that is not numpy's and offers only DLPack."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None, **kwargs):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def bits_of(x):
    return np.asarray(x).view(np.uint16)


# 1, -2.5, a subnormal, the largest finite, -0, inf and a quiet NaN, in each format.
FLOAT16 = np.array([1.0, -2.5, 6e-8, 65504.0, -0.0, np.inf, np.nan], dtype=np.float16)
BFLOAT16_BITS = [0x3F80, 0xC020, 0x0001, 0x7F7F, 0x8000, 0x7F80, 0x7FC0]


def sample(name):
    if name == "float16":
        return FLOAT16
    ml_dtypes = pytest.importorskip("ml_dtypes")
    return np.array(BFLOAT16_BITS, dtype=np.uint16).view(ml_dtypes.bfloat16)


def test_float16_with_numpy_both_ways():
    t = ts.nd.from_dlpack(FLOAT16)
    assert t.dtype == "float16" and t.data_ptr == FLOAT16.ctypes.data
    np.testing.assert_array_equal(bits_of(t.numpy()), bits_of(FLOAT16))
    a = ts.nd.array(FLOAT16, copy=True)
    tensor = capsule_tensor(a.__dlpack__())
    assert (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes) == (kDLFloat, 16, 1)
    y = np.from_dlpack(a)
    assert y.dtype == np.float16 and y.ctypes.data == a.data_ptr
    np.testing.assert_array_equal(bits_of(y), bits_of(FLOAT16))


def test_bfloat16_capsule_is_kDLBfloat_and_imports_back():
    BFLOAT16 = sample("bfloat16")
    a = ts.nd.array(BFLOAT16, copy=True)
    capsule = a.__dlpack__()
    tensor = capsule_tensor(capsule)
    assert (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes) == (kDLBfloat, 16, 1)
    assert tensor.data + tensor.byte_offset == a.data_ptr and tensor.shape[0] == len(BFLOAT16)
    b = ts.nd.from_dlpack(capsule)
    assert b.dtype == "bfloat16" and b.data_ptr == a.data_ptr
    np.testing.assert_array_equal(bits_of(b.numpy()), bits_of(BFLOAT16))
    c = ts.nd.from_dlpack(a)  # an object with __dlpack__
    assert c.dtype == "bfloat16" and c.data_ptr == a.data_ptr


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_half_types_from_a_dlpack_producer(name):
    x = sample(name)
    source = ts.nd.array(x, copy=True)
    dtype = source.dtype
    view = ts.nd.array(Producer(source))  # through DLPack, not numpy's __array__
    assert view.dtype == dtype and view.data_ptr == source.data_ptr
    assert ts.nd.from_dlpack(Producer(source)).data_ptr == source.data_ptr
    copy = ts.nd.array(Producer(source), copy=True)
    assert copy.dtype == dtype and copy.data_ptr != source.data_ptr
    np.testing.assert_array_equal(bits_of(copy.numpy()), bits_of(x))
    as_f32 = ts.nd.array(Producer(source), dtype="float32")
    np.testing.assert_array_equal(as_f32.numpy(), x.astype(np.float32))


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_torch_half_types_both_ways(name):
    torch = pytest.importorskip("torch")
    dt = getattr(torch, name)
    t = torch.tensor([1.0, -2.5, 3.140625, 0.0, -0.0, float("inf")], dtype=dt)
    a = ts.nd.from_dlpack(t)
    assert a.dtype == name and a.data_ptr == t.data_ptr()
    b = ts.nd.array(t)  # a host tensor: viewed through DLPack (its __array__ refuses bfloat16)
    assert b.dtype == name and b.data_ptr == t.data_ptr()
    back = torch.from_dlpack(a.copyto(ts.cpu()))
    assert back.dtype == dt and back.data_ptr() != t.data_ptr()
    assert torch.equal(back.view(torch.int16), t.view(torch.int16))  # bit for bit


@requires_llvm
def test_torch_bfloat16_kernel_arguments():
    torch = pytest.importorskip("torch")
    n = 16
    A = ts.placeholder((n,), name="A", dtype="bfloat16")
    B = ts.placeholder((n,), name="B", dtype="bfloat16")
    C = ts.compute((n,), lambda i: A[i] + B[i], name="C")
    f = ts.build(ts.create_schedule(C), [A, B, C], target="llvm")
    g = torch.Generator().manual_seed(0)
    a = torch.randn(n, generator=g).to(torch.bfloat16)
    b = torch.randn(n, generator=g).to(torch.bfloat16)
    c = torch.zeros(n, dtype=torch.bfloat16)
    f(a, b, c)
    assert torch.equal(c, (a.float() + b.float()).to(torch.bfloat16))
    with pytest.raises(ts.TesselRuntimeError, match="expected dtype bfloat16, got float16"):
        f(a, b, torch.zeros(n, dtype=torch.float16))
