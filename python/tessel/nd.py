"""Arrays: ``ts.nd.array``, ``ts.nd.empty``, ``ts.nd.from_dlpack`` (thin aliases of the C++
runtime's NDArray; see docs/python.md for the copy and lifetime rules)."""
from ._tessel import NDArray  # noqa: F401
from ._tessel import nd_array as array  # noqa: F401
from ._tessel import nd_empty as empty  # noqa: F401
from ._tessel import nd_from_dlpack as from_dlpack  # noqa: F401
