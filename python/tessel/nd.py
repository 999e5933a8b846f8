"""Arrays: ``ts.nd.array``, ``ts.nd.empty``, ``ts.nd.from_dlpack`` (thin aliases of the C++
runtime's NDArray; see docs/python.md for the copy and lifetime rules).

Arrays live on the host or on a CUDA device: ``ts.nd.empty((n,), "float32", device="cuda")``,
``ts.nd.array(x, device=ts.cuda(0))`` (a copy of a numpy array; a view of a CUDA tensor with
``__dlpack__`` on the same device), ``a.numpy()`` copies back to the host (waiting for kernels on
the legacy default stream), ``a.copyto(device)`` copies in any direction.

float16 arrays are numpy's ``float16``; bfloat16 arrays in numpy are ``ml_dtypes.bfloat16`` (the
dtype JAX uses, imported only when needed): ``ts.nd.array(x, dtype="bfloat16")`` rounds to nearest
even, ``a.numpy()`` of a bfloat16 array is bit-exact. Through DLPack both are exchanged with torch
(``torch.float16``, ``torch.bfloat16``); see docs/python.md, "Array dtypes"."""
from ._tessel import NDArray  # noqa: F401
from ._tessel import nd_array as array  # noqa: F401
from ._tessel import nd_empty as empty  # noqa: F401
from ._tessel import nd_from_dlpack as from_dlpack  # noqa: F401
