// Workload parameters between Python and C++ (PyWorkload.cpp), shared with PySearchTask.cpp.
#pragma once

#include "PyCommon.h"
#include "tessel/auto_schedule/task/Workload.h"

namespace tessel::python {

/// A list or tuple of Python values as workload parameters (ints, floats, strings, dtypes, int
/// lists); DSLError naming the first one of another kind.
WorkloadParams to_params(py::handle values);
/// A parameter as a Python value (dtypes as their names).
py::object from_param(const WorkloadParam& p);

}  // namespace tessel::python
