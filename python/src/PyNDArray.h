// Shared between PyNDArray.cpp and PyBuild.cpp: numpy arrays as kernel arguments.
#pragma once

#include <pybind11/numpy.h>

#include "PyCommon.h"
#include "tessel/runtime/Kernel.h"
#include "tessel/runtime/NDArray.h"

namespace tessel::python {

/// `a` wrapped without copying (strides and offset honoured), or a null NDArray when its layout
/// cannot be (non-native byte order, negative strides ...): `*why_not` then says why.
NDArray wrap_numpy(const py::array& a, std::string* why_not);
/// A compact copy of `a` on `device`.
NDArray copy_numpy(const py::array& a, Device device);
/// A numpy array viewing a CPU NDArray's memory (it keeps the NDArray alive).
py::array numpy_view(const NDArray& x);

/// Imports an object with __dlpack__, or a DLPack capsule. For a CUDA producer, `stream` (an int,
/// or None) is passed as __dlpack__(stream=...): the stream the consumer will use.
NDArray from_dlpack(py::object obj, py::object stream);
/// The DLPack stream number of CUstream `stream` (0, the legacy default stream, is 1).
py::object dlpack_stream_of(uintptr_t stream);

/// Kernel arguments converted from Python: NDArrays pass through; numpy arrays are wrapped
/// without copying when the kernel can use their memory, else copied into compact temporaries,
/// which finish_arguments() copies back into the written ones; objects with __dlpack__ are
/// imported, a CUDA producer told that the kernel runs on `stream` (0: legacy default).
struct ArgBinding {
    std::vector<NDArray> arrays;
    std::vector<std::pair<py::array, NDArray>> copy_back;
};
ArgBinding bind_arguments(const KernelSignature& sig, const py::args& args, uintptr_t stream = 0);
void finish_arguments(ArgBinding& binding);

}  // namespace tessel::python
