// Tuning records and apply-best (auto_schedule/records/Record.h, ApplyHistoryBest.h):
// ts.TuningRecord, ts.make_record, ts.read_records, ts.RecordWriter, and
// ts.apply_history_best(log), a context manager under which ts.build() of a schedule without steps
// and ts.op.default_schedule() use the log's best record; its warnings are Python warnings
// (ts.TuningWarning). The shipped tuning logs' switches (auto_schedule/records/ShippedLogs.h) are
// ts.auto_schedule.use_shipped_logs & co.
#include "PyCommon.h"
#include "PyFeatures.h"
#include "tessel/auto_schedule/records/ApplyHistoryBest.h"
#include "tessel/auto_schedule/records/Record.h"
#include "tessel/auto_schedule/records/ShippedLogs.h"

namespace tessel::python {

namespace {

// The context manager: the C++ context lives between __enter__ and __exit__ (on one thread).
class PyApplyHistoryBest {
public:
    explicit PyApplyHistoryBest(std::string path) : path_(std::move(path)) {}
    PyApplyHistoryBest& enter() {
        py::object warn = py::module_::import("warnings").attr("warn");
        py::object category = py::module_::import("tessel").attr("TuningWarning");
        context_ =
            std::make_unique<ApplyHistoryBest>(path_, [warn, category](const std::string& m) {
                py::gil_scoped_acquire gil;
                warn(m, category, 2);
            });
        return *this;
    }
    void exit(const py::args&) { context_.reset(); }
    const ApplyHistoryBest& context() const {
        if (!context_) TESSEL_THROW(RuntimeError) << "apply_history_best: not entered";
        return *context_;
    }

private:
    std::string path_;
    std::unique_ptr<ApplyHistoryBest> context_;
};

void init_shipped_logs(py::module_ a) {
    a.def("use_shipped_logs", &use_shipped_tuning_logs, py::arg("on"),
          "Turns the shipped tuning logs on (the default) or off for the whole process.");
    a.def("shipped_logs_enabled", &shipped_tuning_logs_enabled,
          "Whether use_shipped_logs left the shipped tuning logs on.");
    a.def(
        "shipped_logs_folder",
        []() -> py::object {
            std::string f = shipped_tuning_logs_folder();
            return f.empty() ? py::object(py::none()) : py::object(py::str(f));
        },
        "The folder the shipped tuning logs are read from, or None.");
    a.def(
        "set_shipped_logs_folder",
        [](py::object folder) {
            set_shipped_tuning_logs_folder(folder.is_none() ? std::string()
                                                            : py::str(folder).cast<std::string>());
        },
        py::arg("folder"), "Reads the shipped tuning logs from `folder` (None: none) from now on.");
    a.def("_set_default_shipped_logs_folder", &set_default_shipped_tuning_logs_folder,
          py::arg("folder"));
}

}  // namespace

void init_record(py::module_& m) {
    m.attr("RECORD_FORMAT_VERSION") = kRecordFormatVersion;
    py::class_<TuningRecord>(m, "TuningRecord", "One measured candidate (a line of a log).")
        .def_readonly("dag_hash", &TuningRecord::dag_hash)
        .def_readonly("workload", &TuningRecord::workload)
        .def_readonly("params_json", &TuningRecord::params_json,
                      "the workload's parameters as JSON (workload_params_to_json)")
        .def_readonly("target", &TuningRecord::target)
        .def_readonly("constant", &TuningRecord::constant,
                      "The task's constant inputs (the layout-rewrite option; empty: off).")
        .def_readonly("schedule_json", &TuningRecord::schedule_json)
        .def_property_readonly("error",
                               [](const TuningRecord& r) { return measure_error_name(r.error); })
        .def_readonly("error_message", &TuningRecord::error_message)
        .def_readonly("costs", &TuningRecord::costs)
        .def_readonly("build_seconds", &TuningRecord::build_seconds)
        .def_readonly("run_seconds", &TuningRecord::run_seconds)
        .def_readonly("timestamp", &TuningRecord::timestamp)
        .def_readonly("tessel_version", &TuningRecord::tessel_version)
        .def_readonly("seed", &TuningRecord::seed)
        .def_readonly("round", &TuningRecord::round)
        .def_property_readonly(
            "origin", [](const TuningRecord& r) { return candidate_origin_name(r.origin); })
        .def_readonly("format_version", &TuningRecord::format_version)
        .def_property_readonly("ok", &TuningRecord::ok)
        .def_property_readonly(
            "is_trial", &TuningRecord::is_trial,
            "False for a re-measurement (origin 'remeasure') and a final check's "
            "measurement (origin 'check').")
        .def_property_readonly("mean_cost", &TuningRecord::mean_cost)
        .def_property_readonly("task_key", &TuningRecord::task_key)
        .def("to_json", &record_to_json, "The record as one line of JSON.");
    m.def(
        "make_record",
        [](const SearchTask& task, const Schedule& s, const MeasureResult& result, uint64_t seed,
           int64_t round, const std::string& origin) {
            std::optional<CandidateOrigin> o = candidate_origin_from_name(origin);
            if (!o) TESSEL_THROW(DSLError) << "unknown candidate origin '" << origin << "'";
            return make_record(task, {s, *o}, result, seed, round);
        },
        py::arg("task"), py::arg("schedule"), py::arg("result"), py::kw_only(), py::arg("seed") = 0,
        py::arg("round") = 0, py::arg("origin") = "manual");
    m.def(
        "record_from_json",
        [](const std::string& line) -> py::object {
            std::optional<TuningRecord> r = record_from_json(line);
            return r ? py::cast(*r) : py::object(py::none());
        },
        py::arg("line"), "A record from one line, or None when the line is skipped.");
    m.def(
        "read_records",
        [](const std::string& path) {
            RecordLog log = read_records(path);
            return py::make_tuple(log.records, log.skipped, log.skip_reasons);
        },
        py::arg("path"), "(records, skipped lines, {reason: lines}) of the log at path.");
    py::class_<ScheduleCosts>(m, "ScheduleCosts",
                              "Each schedule's cost in a log: the median of its successful "
                              "measurements (its trial and re-measurements), a final check's "
                              "alone once one timed it; the schedules a check did not time rank "
                              "behind. Add records in the log's order.")
        .def(py::init<>())
        .def("add", &ScheduleCosts::add, py::arg("record"),
             "Adds the next record; returns its schedule's cost after it (inf: none succeeded).")
        .def("cost", &ScheduleCosts::cost, py::arg("record"), "The record's schedule's cost.")
        .def("measurements", &ScheduleCosts::measurements, py::arg("record"),
             "Successful measurements of the record's schedule.")
        .def("behind_check", &ScheduleCosts::behind_check, py::arg("record"),
             "Whether the record's schedule ranks behind its task's last final check (measured "
             "before it and not timed in it).")
        .def(
            "best",
            [](const ScheduleCosts& c) -> py::object {
                auto b = c.best();
                return b ? py::make_tuple(b->seconds, b->record) : py::object(py::none());
            },
            "(seconds, index of its first record) of the fastest schedule, or None.");
    py::class_<RecordWriter>(m, "RecordWriter", "Appends records to a log (torn tail cut first).")
        .def(py::init<const std::string&>(), py::arg("path"))
        .def("append", &RecordWriter::append, py::arg("records"))
        .def_property_readonly("truncated_bytes", &RecordWriter::truncated_bytes);
    py::class_<PyApplyHistoryBest>(m, "apply_history_best",
                                   "with ts.apply_history_best(log): builds use the log's best.")
        .def(py::init<std::string>(), py::arg("log"))
        .def("__enter__", &PyApplyHistoryBest::enter, py::return_value_policy::reference)
        .def("__exit__", &PyApplyHistoryBest::exit)
        .def_property_readonly("records",
                               [](const PyApplyHistoryBest& c) { return c.context().records(); })
        .def_property_readonly("skipped_lines", [](const PyApplyHistoryBest& c) {
            return c.context().skipped_lines();
        });
    init_shipped_logs(auto_schedule_module(m));
}

}  // namespace tessel::python
