// Calling a compiled kernel from Python cheaply: the argument check against the kernel's signature
// is cached per distinct argument set, keyed on what the check reads (dtype, shape, strides,
// device, writability; never an object's identity or address), so a repeated call only gathers
// the data pointers into a stack array and checks what depends on them (null, alignment,
// overlap). Arguments read without allocating: tessel NDArrays, numpy arrays (their C struct),
// and tensors whose type offers DLPack's C exchange API (`__dlpack_c_exchange_api__`, torch >=
// 2.10 among others): a non-owning DLTensor filled on the stack, no capsule; a CUDA kernel then
// runs on the producer's current stream (torch.cuda.current_stream()) unless `stream=` is given.
// Anything else (other __dlpack__ objects, arrays needing a copy) takes the general path
// (bind_arguments), which checks everything.
#pragma once

#include <deque>
#include <memory>

#include "PyCommon.h"
#include "tessel/runtime/Kernel.h"

namespace tessel::python {

/// The cached checks of one kernel (see the file comment). Guarded by the GIL.
class CallCache;

/// A fresh cache for `kernel`.
std::shared_ptr<CallCache> make_call_cache(const Kernel& kernel);

/// Calls `kernel` with Python arguments (and the `stream=` keyword): the cached path when every
/// argument allows it, else the general one.
void call_kernel(const Kernel& kernel, CallCache& cache, const py::args& args,
                 const py::kwargs& kwargs);

}  // namespace tessel::python
