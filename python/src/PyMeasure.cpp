// ts.Measurer: builds and measures tuning candidates (auto_schedule/measure/Measure.h) — builds on
// a thread pool, runs in tessel-measure worker processes, every output checked before its time
// counts. Results carry error codes by name ("none", "crash", "wrong_answer", ...).
#include <set>

#include "PyCommon.h"
#include "PyOptions.h"
#include "tessel/auto_schedule/measure/Measure.h"
#include "tessel/auto_schedule/measure/MeasureRunner.h"

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

namespace {

// "Measurer(**options)" and each option with its default (MeasureOptions::fields).
const std::string& measurer_init_doc() {
    static const std::string doc = [] {
        py::list keywords;
        list_keywords<MeasureOptions>(keywords, kMeasurer);
        std::string d = "Measurer(**options): a Measurer with these keyword options (default):";
        for (py::handle k : keywords) {
            py::tuple t = k.cast<py::tuple>();
            d += "\n  " + t[0].cast<std::string>() + " (" + std::string(py::repr(t[1])) +
                 "): " + t[2].cast<std::string>();
        }
        return d;
    }();
    return doc;
}

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
        .def(py::init([](const py::kwargs& kwargs) {
                 MeasureOptions o;
                 std::set<std::string> used;
                 apply_keywords(o, kwargs, kMeasurer, "Measurer", used);
                 refuse_unknown_keywords(kwargs, used, "Measurer");
                 return std::make_unique<Measurer>(std::move(o));
             }),
             measurer_init_doc().c_str())
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
    // The measuring end of a cluster (tessel.distributed's actors): a MeasureRequest as JSON in,
    // one MeasureResult JSON per candidate out, through a LocalMeasureRunner whose workers stay
    // warm between calls.
    py::class_<LocalMeasureRunner>(m, "LocalMeasureRunner",
                                   "Measures MeasureRequests on this machine (MeasureRunner.h).")
        .def(py::init<>())
        .def(
            "run_json",
            [](LocalMeasureRunner& self, const std::string& request) {
                std::vector<MeasureResult> results;
                {
                    py::gil_scoped_release release;
                    results = self.run(measure_request_from_json(request));
                }
                std::vector<std::string> out;
                for (const MeasureResult& r : results) out.push_back(measure_result_to_json(r));
                return out;
            },
            py::arg("request"),
            "Measures a MeasureRequest given as JSON; one MeasureResult JSON per candidate.")
        .def_property_readonly(
            "stats", [](const LocalMeasureRunner& self) { return stats_dict(self.stats()); },
            "Where the time went (seconds), summed over requests.");
    m.def("default_measure_worker_path", &default_measure_worker_path,
          "The tessel-measure program a Measurer starts unless told otherwise.");
}

}  // namespace tessel::python
