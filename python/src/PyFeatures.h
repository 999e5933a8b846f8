// Conversions between feature matrices and numpy arrays, shared by PyFeatures.cpp and
// PyCostModel.cpp, and the `tessel._tessel.auto_schedule` submodule they (and PyTune.cpp)
// register into.
#pragma once

#include <pybind11/numpy.h>

#include "PyCommon.h"
#include "tessel/auto_schedule/features/Features.h"

namespace tessel::python {

/// The matrix as a new float32 numpy array of shape (rows, kNumFeatures).
py::array_t<float> to_numpy(const FeatureMatrix& m);
/// A 2-D array (rows x features, converted to float32) as a matrix; RuntimeError for another
/// number of dimensions (the C++ API checks the width where it is used).
FeatureMatrix to_feature_matrix(py::handle array);
/// The `auto_schedule` submodule of `m` (made on first use).
py::module_ auto_schedule_module(py::module_& m);

void init_features(py::module_& m);
void init_cost_model(py::module_& m);
void init_tune(py::module_& m);

}  // namespace tessel::python
