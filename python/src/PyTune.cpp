// ts.auto_schedule's tuner (auto_schedule/tuner/Tuner.h): the native tune() the Python tune() wraps
// with its progress bar (python/tessel/auto_schedule.py), its result and progress types,
// format_progress, and the tuning curves of a log for plot().
#include <limits>
#include <map>
#include <set>

#include "PyFeatures.h"
#include "PyOptions.h"
#include "tessel/auto_schedule/tuner/Tuner.h"

namespace tessel::python {

namespace {

struct NativeTuneArgs {
    TuningOptions options;
    py::object on_progress;  // outlives tune(): the C++ callbacks refer to it, never copy it
};

TuningResult native_tune(const SearchTask& task, NativeTuneArgs& args) {
    TuningOptions& o = args.options;
    py::object* callback = &args.on_progress;
    if (!callback->is_none())
        o.on_progress = [callback](const TuningProgress& p) {
            py::gil_scoped_acquire gil;
            (*callback)(p);
        };
    // Ctrl-C (or another signal's Python handler) stops the tuning at the next phase: what was
    // measured is in the log, and KeyboardInterrupt reaches the caller.
    o.should_stop = [] {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        return false;
    };
    py::gil_scoped_release release;
    return tune(task, o);
}

py::object best_schedule(const TuningResult& r) {
    if (!r.best_schedule) return py::none();
    return py::cast(std::make_shared<Schedule>(*r.best_schedule));
}

// The log's curves, one per task in the order the tasks first appear: (task key, workload,
// flops, points). The flops come from the registered workload (0 for a DAG task or one this
// process cannot rebuild: plot() then draws times).
py::list log_curves(const std::string& path) {
    RecordLog log = read_records(path);
    std::vector<std::string> order;
    std::map<std::string, std::vector<TuningRecord>> by_task;
    for (TuningRecord& r : log.records) {
        std::string key = r.task_key();
        if (!by_task.count(key)) order.push_back(key);
        by_task[key].push_back(std::move(r));
    }
    py::list out;
    for (const std::string& key : order) {
        const TuningRecord& first = by_task[key].front();
        double flops = 0;
        try {
            if (!first.workload.empty())
                flops = task_flops(SearchTask(first.workload,
                                              workload_params_from_json(first.params_json),
                                              Target(first.target)));
        } catch (const Error&) {
        }
        out.append(py::make_tuple(key, first.workload, flops, tuning_curve(by_task[key], flops)));
    }
    return out;
}

void bind_types(py::module_& a) {
    py::class_<TuningCurvePoint>(a, "TuningCurvePoint", "The best time after `trial` trials.")
        .def_readonly("trial", &TuningCurvePoint::trial)
        .def_readonly("best_seconds", &TuningCurvePoint::best_seconds)
        .def_readonly("best_gflops", &TuningCurvePoint::best_gflops)
        .def("__repr__", [](const TuningCurvePoint& p) {
            return "TuningCurvePoint(trial=" + std::to_string(p.trial) +
                   ", best_gflops=" + std::to_string(p.best_gflops) + ")";
        });
    py::class_<TuningRound>(a, "TuningRound", "What one round did; times in seconds.")
        .def_readonly("round", &TuningRound::round)
        .def_readonly("measured", &TuningRound::measured)
        .def_readonly("remeasured", &TuningRound::remeasured)
        .def_readonly("errors", &TuningRound::errors)
        .def_readonly("chosen_by_model", &TuningRound::chosen_by_model)
        .def_readonly("random", &TuningRound::random)
        .def_readonly("measured_default", &TuningRound::measured_default)
        .def_readonly("epoch", &TuningRound::epoch)
        .def_readonly("restarted", &TuningRound::restarted)
        .def_readonly("search_seconds", &TuningRound::search_seconds)
        .def_readonly("build_seconds", &TuningRound::build_seconds)
        .def_readonly("run_seconds", &TuningRound::run_seconds)
        .def_readonly("train_seconds", &TuningRound::train_seconds)
        .def_readonly("total_seconds", &TuningRound::total_seconds)
        .def_property_readonly("states_scored",
                               [](const TuningRound& r) { return r.search.scored; })
        .def_readonly("best_seconds", &TuningRound::best_seconds);
    py::class_<TuningProgress>(a, "TuningProgress", "Where a tuning stands (after each round).")
        .def_readonly("task", &TuningProgress::task)
        .def_readonly("trials", &TuningProgress::trials)
        .def_readonly("trials_total", &TuningProgress::trials_total)
        .def_readonly("resumed_trials", &TuningProgress::resumed_trials)
        .def_readonly("best_seconds", &TuningProgress::best_seconds)
        .def_readonly("best_gflops", &TuningProgress::best_gflops)
        .def_readonly("elapsed_seconds", &TuningProgress::elapsed_seconds)
        .def_readonly("eta_seconds", &TuningProgress::eta_seconds)
        .def_readonly("last_round", &TuningProgress::last_round)
        .def("__str__", &format_progress);
    py::class_<TuningResult>(a, "TuningResult", "What tune() found.")
        .def_property_readonly("best_schedule", &best_schedule,
                               "The best schedule in the log, or None when no trial succeeded.")
        .def_readonly("best_seconds", &TuningResult::best_seconds,
                      "The best schedule's cost in the log (the median of its timings in the "
                      "final check, where one ran; else of the search's).")
        .def_readonly("best_gflops", &TuningResult::best_gflops)
        .def_readonly("final_seconds", &TuningResult::final_seconds,
                      "The best schedule's median in the final check (final_measurements: the "
                      "fastest states and the default timed side by side), which chose it. inf "
                      "when no check ran.")
        .def_readonly("final_gflops", &TuningResult::final_gflops)
        .def_readonly("default_seconds", &TuningResult::default_seconds,
                      "The default schedule's median in the final check (inf: not checked).")
        .def_readonly("best_is_default", &TuningResult::best_is_default,
                      "The best is the default schedule: the check found none faster.")
        .def_readonly("search_best_seconds", &TuningResult::search_best_seconds,
                      "The search's best before the final check, as the search timed it.")
        .def_readonly("flops", &TuningResult::flops)
        .def_readonly("trials", &TuningResult::trials)
        .def_readonly("resumed_trials", &TuningResult::resumed_trials)
        .def_readonly("errors", &TuningResult::errors)
        .def_readonly("curve", &TuningResult::curve)
        .def_readonly("rounds", &TuningResult::rounds)
        .def_readonly("stop_reason", &TuningResult::stop_reason)
        .def_readonly("seconds", &TuningResult::seconds)
        .def("__repr__", [](const TuningResult& r) {
            return "TuningResult(trials=" + std::to_string(r.trials) +
                   ", best_gflops=" + std::to_string(r.best_gflops) +
                   ", final_gflops=" + std::to_string(r.final_gflops) + ", stop_reason='" +
                   r.stop_reason + "')";
        });
}

}  // namespace

void init_tune(py::module_& m) {
    py::module_ a = auto_schedule_module(m);
    bind_types(a);
    a.def(
        "_tune",
        [](const SearchTask& task, int verbose, py::object on_progress, const py::kwargs& options) {
            NativeTuneArgs args;
            TuningOptions& o = args.options;
            std::set<std::string> used;
            apply_keywords(o, options, kTune, "tune", used);
            apply_keywords(o.measure, options, kTune, "tune", used);
            refuse_unknown_keywords(options, used, "tune");
            o.verbose = verbose;
            args.on_progress = std::move(on_progress);
            return native_tune(task, args);
        },
        py::arg("task"), py::kw_only(), py::arg("verbose") = 0, py::arg("on_progress") = py::none(),
        "The C++ tune() (auto_schedule/tuner/Tuner.h) with the keyword options tune_keywords() "
        "lists; ts.auto_schedule.tune() is the Python API.");
    a.def(
        "tune_keywords",
        [] {
            py::list out;
            list_keywords<TuningOptions>(out, kTune);
            list_keywords<MeasureOptions>(out, kTune);
            return out;
        },
        "[(name, default, doc), ...]: the options of tune(), described once in C++ "
        "(TuningOptions::fields, MeasureOptions::fields).");
    a.def("format_progress", &format_progress, py::arg("progress"),
          "The one-line progress report the C++ tuner prints.");
    a.def("task_flops", &task_flops, py::arg("task"),
          "The task's floating-point operations per run (what GFLOP/s divide).");
    a.def("tuning_curve", &tuning_curve, py::arg("records"), py::arg("flops") = 0.0,
          "[TuningCurvePoint, ...]: the best time after each trial of `records` (one task's, in "
          "log order) and the re-measurements that follow it; a schedule costs the median of "
          "its measurements. GFLOP/s from `flops` (0: left 0).");
    a.def("_log_curves", &log_curves, py::arg("log_file"),
          "[(task key, workload, flops, [TuningCurvePoint, ...]), ...] of a tuning log.");
}

}  // namespace tessel::python
