# The CUDA runtime from Python: driver queries, device arrays, and calling CUDA kernels with tessel
# arrays or any object with __dlpack__ (torch) on a chosen stream. Without a GPU the device tests
# skip with the driver's reason; the torch tests skip without torch.
import numpy as np
import pytest

import tessel as ts

HAVE_GPU = ts.cuda_available()
requires_gpu = pytest.mark.skipif(not HAVE_GPU, reason="no CUDA device: " +
                                  ts.cuda_unavailable_reason())


def torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    return torch


@pytest.mark.skipif(HAVE_GPU, reason="a CUDA device is present")
def test_without_a_gpu_every_use_says_why():
    reason = ts.cuda_unavailable_reason()
    assert reason and ts.cuda_device_count() == 0
    for use in (lambda: ts.nd.empty((4,), device="cuda"),
                lambda: ts.nd.array(np.zeros(4, "float32"), device=ts.cuda(0)),
                lambda: ts.cuda_device_info(0),
                lambda: ts.cuda_synchronize(0)):
        with pytest.raises(ts.TesselRuntimeError, match="libcuda|device|cuInit"):
            use()


@requires_gpu
def test_device_info():
    info = ts.cuda_device_info(0)
    major, minor = info["compute_capability"]
    assert info["arch"] == f"sm_{major}{minor}" and info["name"]
    assert info["max_threads_per_block"] >= 512 and len(info["max_grid_dim"]) == 3
    assert info["shared_bytes_per_block_optin"] >= info["shared_bytes_per_block"]
    assert ts.cuda_device_count() >= 1 and ts.cuda_unavailable_reason() == ""
    ts.cuda_synchronize(0)


@requires_gpu
def test_device_arrays_round_trip():
    x = np.arange(12, dtype="float32").reshape(3, 4)
    a = ts.nd.array(x, device=ts.cuda(0))
    assert a.device == ts.cuda(0) and a.shape == (3, 4) and a.dtype == "float32"
    assert a.__dlpack_device__() == (2, 0)
    np.testing.assert_array_equal(a.numpy(), x)
    b = a.copyto(ts.cuda(0))  # device to device
    assert b.data_ptr != a.data_ptr
    np.testing.assert_array_equal(b.copyto("cpu").numpy(), x)
    e = ts.nd.empty((5,), "int32", device="cuda")
    e.copyfrom(np.arange(5, dtype="int32"))
    assert e.numpy().tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError):
        np.asarray(a)  # no host view of device memory


def build_add(n=1000):
    A = ts.placeholder((n,), name="A")
    B = ts.placeholder((n,), name="B")
    C = ts.compute((n,), lambda i: A[i] + B[i], name="C")
    s = ts.create_schedule(C)
    bo, ti = s[C].split(C.op.axis[0], factor=128)
    s[C].bind(bo, "blockIdx.x")
    s[C].bind(ti, "threadIdx.x")
    arch = ts.cuda_device_info(0)["arch"]
    try:
        return ts.build(s, [A, B, C], target=f"cuda -arch={arch}")
    except ts.CompileError as e:
        if "not built yet" in str(e) or "without the CUDA backend" in str(e):
            pytest.skip(f"no CUDA code generation in this build: {e}")
        raise


@requires_gpu
def test_call_with_device_arrays():
    f = build_add()
    a, b = np.random.rand(1000).astype("float32"), np.random.rand(1000).astype("float32")
    A, B = ts.nd.array(a, device="cuda"), ts.nd.array(b, device="cuda")
    C = ts.nd.empty((1000,), device="cuda")
    f(A, B, C)
    np.testing.assert_allclose(C.numpy(), a + b)
    f(A, A, C, stream=0)
    np.testing.assert_allclose(C.numpy(), a + a)
    with pytest.raises(TypeError, match="stream"):
        f(A, B, C, strem=0)
    g = ts.load_module(f.save())  # the cubin loads onto the device at the first call
    g(B, B, C)
    np.testing.assert_allclose(C.numpy(), b + b)


@requires_gpu
def test_torch_tensors_in_and_out():
    torch = torch_cuda()
    f = build_add()
    a = torch.rand(1000, device="cuda")
    b = torch.rand(1000, device="cuda")
    c = torch.empty(1000, device="cuda")
    f(a, b, c)
    torch.testing.assert_close(c, a + b)
    # A tessel array seen by torch, and the other way round, without copies.
    t = ts.nd.array(a.cpu().numpy(), device="cuda")
    tt = torch.from_dlpack(t)
    assert tt.data_ptr() == t.data_ptr and tt.device.type == "cuda"
    torch.testing.assert_close(tt, a)
    back = ts.nd.from_dlpack(c)
    assert back.data_ptr == c.data_ptr() and back.device == ts.cuda(0)


@requires_gpu
def test_torch_stream_handshake():
    torch = torch_cuda()
    f = build_add(1 << 20)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        a = torch.rand(1 << 20, device="cuda")
        b = torch.rand(1 << 20, device="cuda")
        c = torch.zeros(1 << 20, device="cuda")
        # Queued on torch's stream: ordered after the writes of a and b above.
        f(a, b, c, stream=s.cuda_stream)
        d = c * 2  # ordered after the kernel on the same stream
    s.synchronize()
    torch.testing.assert_close(d, (a + b) * 2)
    # On the legacy default stream, torch's current stream told to wait (DLPack stream=1).
    e = torch.empty_like(c)
    f(a, b, e)
    torch.cuda.synchronize()
    torch.testing.assert_close(e, a + b)
