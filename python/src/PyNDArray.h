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

/// Kernel arguments converted from Python: NDArrays pass through; numpy arrays are wrapped
/// without copying when the kernel can use their memory, else copied into compact temporaries,
/// which finish_arguments() copies back into the written ones; objects with __dlpack__ are
/// imported.
struct ArgBinding {
    std::vector<NDArray> arrays;
    std::vector<std::pair<py::array, NDArray>> copy_back;
};
ArgBinding bind_arguments(const KernelSignature& sig, const py::args& args);
void finish_arguments(ArgBinding& binding);

}  // namespace tessel::python
