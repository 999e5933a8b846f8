// ts.auto_schedule.CostModel and MeasuredProgram: the XGBoost cost model (auto_schedule/
// CostModel.h), its ranking figures and the model file.
#include <pybind11/stl.h>

#include "PyFeatures.h"
#include "tessel/auto_schedule/cost_model/CostModel.h"

namespace tessel::python {

namespace {

MeasuredProgram make_program(const std::string& task_key, py::handle features,
                             std::vector<double> costs, int error, py::object schedule) {
    MeasuredProgram p;
    p.task_key = task_key;
    p.features = to_feature_matrix(features);
    p.costs = std::move(costs);
    p.error = error;
    if (!schedule.is_none()) p.steps = schedule.cast<const Schedule&>().steps();
    return p;
}

// A list of matrices (numpy arrays) or MeasuredPrograms as feature matrices.
std::vector<FeatureMatrix> to_matrices(const py::sequence& programs) {
    std::vector<FeatureMatrix> out;
    for (py::handle p : programs)
        out.push_back(py::isinstance<MeasuredProgram>(p) ? p.cast<const MeasuredProgram&>().features
                                                         : to_feature_matrix(p));
    return out;
}

std::string quality_repr(const RankingQuality& q) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "RankingQuality(pairwise_accuracy=%.4f, pairs=%lld, recall_at_k=%.4f, k=%d, "
                  "tasks=%d, from_model=%s)",
                  q.pairwise_accuracy, (long long)q.pairs, q.recall_at_k, q.k, q.tasks,
                  q.from_model ? "True" : "False");
    return buf;
}

void init_measured_program(py::module_& a) {
    py::class_<MeasuredProgram>(a, "MeasuredProgram",
                                "One measured program as the cost model takes it.")
        .def(py::init(&make_program), py::arg("task_key"), py::arg("features"),
             py::arg("costs") = std::vector<double>{}, py::kw_only(), py::arg("error") = 0,
             py::arg("schedule") = py::none(),
             "MeasuredProgram(task.key, features_matrix, costs=[seconds, ...], error=0, "
             "schedule=None): a failed program has an error code (or no costs).")
        .def_readonly("task_key", &MeasuredProgram::task_key)
        .def_property_readonly("features",
                               [](const MeasuredProgram& p) { return to_numpy(p.features); })
        .def_readonly("costs", &MeasuredProgram::costs)
        .def_readonly("error", &MeasuredProgram::error)
        .def_property_readonly("num_steps", [](const MeasuredProgram& p) { return p.steps.size(); })
        .def_property_readonly("ok", &MeasuredProgram::ok)
        .def_property_readonly("mean_cost", &MeasuredProgram::mean_cost);
    py::class_<RankingQuality>(a, "RankingQuality", "How well scores rank programs.")
        .def_readonly("pairwise_accuracy", &RankingQuality::pairwise_accuracy)
        .def_readonly("pairs", &RankingQuality::pairs)
        .def_readonly("recall_at_k", &RankingQuality::recall_at_k)
        .def_readonly("k", &RankingQuality::k)
        .def_readonly("tasks", &RankingQuality::tasks)
        .def_readonly("from_model", &RankingQuality::from_model)
        .def("__repr__", &quality_repr);
    a.def("normalized_throughputs", &normalized_throughputs, py::arg("programs"),
          "Per program, the task's best mean cost over its own (0 for a failure).");
    a.def("ranking_quality", &ranking_quality, py::arg("programs"), py::arg("scores"),
          py::arg("k") = 30,
          "Pairwise accuracy (pairs within a task, failures out, pairs < 5% apart dropped) and "
          "recall@k of `scores` (higher = faster).");
}

CostModelOptions make_options(uint64_t seed, int nthread, int min_programs, int num_rounds,
                              int early_stop_rounds) {
    CostModelOptions o;
    o.seed = seed;
    o.nthread = nthread;
    o.min_programs = min_programs;
    o.num_rounds = num_rounds;
    o.early_stop_rounds = early_stop_rounds;
    return o;
}

}  // namespace

void init_cost_model(py::module_& m) {
    py::module_ a = auto_schedule_module(m);
    init_measured_program(a);
    CostModelOptions d;
    py::class_<CostModel>(a, "CostModel", "The XGBoost cost model with Ansor's objective.")
        .def(py::init([](uint64_t seed, int nthread, int min_programs, int num_rounds,
                         int early_stop_rounds) {
                 return std::make_unique<CostModel>(
                     make_options(seed, nthread, min_programs, num_rounds, early_stop_rounds));
             }),
             py::kw_only(), py::arg("seed") = d.seed, py::arg("nthread") = d.nthread,
             py::arg("min_programs") = d.min_programs, py::arg("num_rounds") = d.num_rounds,
             py::arg("early_stop_rounds") = d.early_stop_rounds)
        .def_static("available", &CostModel::available, "Whether this build has XGBoost.")
        .def_static("model_path", &CostModel::model_path, py::arg("log_path"),
                    "The model file beside a tuning log.")
        .def("train", &CostModel::train, py::arg("programs"),
             "Retrains from scratch on `programs` (a list of MeasuredProgram).")
        .def("update", &CostModel::update, py::arg("batch"),
             "The ranking quality on `batch` before training on it, then retrains on everything.")
        .def(
            "predict",
            [](const CostModel& c, const py::sequence& programs) {
                std::vector<double> s = c.predict(to_matrices(programs));
                return py::array_t<double>(py::ssize_t(s.size()), s.data());
            },
            py::arg("programs"),
            "Scores (higher = faster) of feature matrices or MeasuredPrograms; random until "
            "trained.")
        .def_property_readonly("trained", &CostModel::trained)
        .def_property_readonly("num_trained_programs", &CostModel::num_trained_programs)
        .def_property_readonly("num_history", [](const CostModel& c) { return c.history().size(); })
        .def("save", &CostModel::save, py::arg("path"))
        .def("load", &CostModel::load, py::arg("path"));
}

}  // namespace tessel::python
