// ts.Measurer: builds and measures tuning candidates (auto_schedule/measure/Measure.h) — builds on
// a thread pool, runs in tessel-measure worker processes, every output checked before its time
// counts. Results carry error codes by name ("none", "crash", "wrong_answer", ...).
#include "PyCommon.h"
#include "tessel/auto_schedule/measure/Measure.h"

namespace tessel::python {

namespace {

CandidateOrigin to_origin(const std::string& name) {
    std::optional<CandidateOrigin> o = candidate_origin_from_name(name);
    if (!o)
        TESSEL_THROW(DSLError) << "unknown candidate origin '" << name
                               << "' (manual, cost_model, random, mutation, crossover)";
    return *o;
}

}  // namespace

MeasureOptions measure_options(int number, int repeat, double min_repeat_ms, bool flush_cache,
                               double build_timeout, double run_timeout, int build_threads,
                               int64_t worker_memory_limit, std::string worker_path,
                               uint64_t seed) {
    MeasureOptions o;
    o.number = number;
    o.repeat = repeat;
    o.min_repeat_ms = min_repeat_ms;
    o.flush_cache = flush_cache;
    o.build_timeout_seconds = build_timeout;
    o.run_timeout_seconds = run_timeout;
    o.build_threads = build_threads;
    o.worker_memory_limit_bytes = worker_memory_limit;
    o.worker_path = std::move(worker_path);
    o.seed = seed;
    return o;
}

namespace {

py::dict stats_dict(const MeasureStats& s) {
    py::dict d;
    d["candidates"] = s.candidates;
    d["workers_started"] = s.workers_started;
    d["reference"] = s.reference;
    d["build"] = s.build;
    d["process_start"] = s.process_start;
    d["worker_start"] = s.worker_start;
    d["load"] = s.load;
    d["check_run"] = s.check_run;
    d["transfer"] = s.transfer;
    d["check"] = s.check;
    d["timing"] = s.timing;
    d["total"] = s.total;
    return d;
}

}  // namespace

void init_measure(py::module_& m) {
    py::class_<MeasureResult>(m, "MeasureResult", "What measuring one candidate gave (seconds).")
        .def_property_readonly("error",
                               [](const MeasureResult& r) { return measure_error_name(r.error); })
        .def_readonly("error_message", &MeasureResult::error_message)
        .def_readonly("costs", &MeasureResult::costs)
        .def_readonly("build_seconds", &MeasureResult::build_seconds)
        .def_readonly("run_seconds", &MeasureResult::run_seconds)
        .def_readonly("timestamp", &MeasureResult::timestamp)
        .def_property_readonly("ok", &MeasureResult::ok)
        .def_property_readonly("mean_cost", &MeasureResult::mean_cost)
        .def("__repr__", [](const MeasureResult& r) {
            return std::string("MeasureResult(") + measure_error_name(r.error) +
                   (r.ok() ? ", " + std::to_string(r.mean_cost()) + " s" : "") + ")";
        });
    py::class_<Measurer>(m, "Measurer",
                         "Builds and measures candidates of search tasks (TVM's timing defaults).")
        .def(py::init([](int number, int repeat, double min_repeat_ms, bool flush_cache,
                         double build_timeout, double run_timeout, int build_threads,
                         int64_t worker_memory_limit, std::string worker_path, uint64_t seed) {
                 return std::make_unique<Measurer>(measure_options(
                     number, repeat, min_repeat_ms, flush_cache, build_timeout, run_timeout,
                     build_threads, worker_memory_limit, std::move(worker_path), seed));
             }),
             py::kw_only(), py::arg("number") = 3, py::arg("repeat") = 1,
             py::arg("min_repeat_ms") = 100.0, py::arg("flush_cache") = false,
             py::arg("build_timeout") = 15.0, py::arg("run_timeout") = 10.0,
             py::arg("build_threads") = 0, py::arg("worker_memory_limit") = 0,
             py::arg("worker_path") = "", py::arg("seed") = 1)
        .def(
            "measure",
            [](Measurer& self, const SearchTask& task, const std::vector<Schedule>& schedules,
               const std::string& origin) {
                std::vector<MeasureInput> inputs;
                for (const Schedule& s : schedules) inputs.push_back({s, to_origin(origin)});
                py::gil_scoped_release release;
                return self.measure(task, inputs);
            },
            py::arg("task"), py::arg("schedules"), py::kw_only(), py::arg("origin") = "manual",
            "Measures schedules of the task; one MeasureResult each, in order.")
        .def_property_readonly(
            "stats", [](const Measurer& self) { return stats_dict(self.stats()); },
            "Where the time went (seconds), summed over measurements.");
    m.def("default_measure_worker_path", &default_measure_worker_path,
          "The tessel-measure program a Measurer starts unless told otherwise.");
}

}  // namespace tessel::python
