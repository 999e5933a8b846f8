"""Arrays: ``ts.nd.array``, ``ts.nd.empty``, ``ts.nd.from_dlpack`` (thin aliases of the C++
runtime's NDArray; see docs/python.md for the copy and lifetime rules).

Arrays live on the host or on a CUDA device: ``ts.nd.empty((n,), "float32", device="cuda")``,
``ts.nd.array(x, device=ts.cuda(0))`` (a copy of a numpy array; a view of a CUDA tensor with
``__dlpack__`` on the same device), ``a.numpy()`` copies back to the host (waiting for kernels on
the legacy default stream), ``a.copyto(device)`` copies in any direction."""
from ._tessel import NDArray  # noqa: F401
from ._tessel import nd_array as array  # noqa: F401
from ._tessel import nd_empty as empty  # noqa: F401
from ._tessel import nd_from_dlpack as from_dlpack  # noqa: F401
