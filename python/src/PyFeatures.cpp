// ts.auto_schedule.features(state, target): Ansor's features of a schedule (auto_schedule/
// Features.h) as (names, numpy matrix), and ts.auto_schedule.feature_names().
#include "PyFeatures.h"

#include <cstring>

#include "tessel/auto_schedule/task/SearchTask.h"

namespace tessel::python {

py::array_t<float> to_numpy(const FeatureMatrix& m) {
    py::array_t<float> a({py::ssize_t(m.rows), py::ssize_t(kNumFeatures)});
    if (!m.values.empty())
        std::memcpy(a.mutable_data(), m.values.data(), m.values.size() * sizeof(float));
    return a;
}

FeatureMatrix to_feature_matrix(py::handle array) {
    auto a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(array);
    if (!a || a.ndim() != 2)
        TESSEL_THROW(RuntimeError)
            << "features: expected a 2-D array (store rows x " << kNumFeatures << " features), got "
            << py::str(py::repr(array)).cast<std::string>().substr(0, 80);
    FeatureMatrix m;
    m.rows = int(a.shape(0));
    m.values.assign(a.data(), a.data() + a.size());
    return m;
}

py::module_ auto_schedule_module(py::module_& m) {
    if (py::hasattr(m, "auto_schedule")) return m.attr("auto_schedule").cast<py::module_>();
    return m.def_submodule("auto_schedule",
                           "The auto-scheduler: features and the cost model (docs/tuning.md).");
}

namespace {

py::tuple features(const std::shared_ptr<Schedule>& s, py::object target, bool log_scale) {
    FeatureOptions o;
    o.log_scale = log_scale;
    FeatureMatrix m = py::isinstance<SearchTask>(target)
                          ? extract_features(target.cast<const SearchTask&>(), *s, o)
                          : extract_features(*s, to_target(target), o);
    return py::make_tuple(feature_names(), to_numpy(m));
}

}  // namespace

void init_features(py::module_& m) {
    py::module_ a = auto_schedule_module(m);
    a.attr("NUM_FEATURES") = kNumFeatures;
    a.def("feature_names", &feature_names, "The names of the 164 feature columns, in order.");
    a.def("features", &features, py::arg("state"), py::arg("target") = "llvm", py::kw_only(),
          py::arg("log_scale") = true,
          "(names, matrix): Ansor's features of a schedule, one row per store statement of its "
          "IR at the feature point (float32, rows x 164). `target` is a target or a SearchTask "
          "(whose DAG, target and hardware are used); log_scale=False gives raw counts.");
}

}  // namespace tessel::python
