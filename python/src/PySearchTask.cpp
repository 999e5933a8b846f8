// ts.SearchTask: a tuning task (auto_schedule/task/SearchTask.h) — a registered workload with its
// parameters, or a DAG, for a target; its key, its JSON (which rebuilds it in any process), and
// schedule records applied through it.
#include "PyOptions.h"
#include "PyWorkload.h"
#include "tessel/auto_schedule/task/SearchTask.h"

namespace tessel::python {

namespace {

SearchTask make_task(py::object workload, py::object params, py::object target, py::object dag,
                     const std::vector<std::string>& constant) {
    Target t = to_target(target);
    if (!dag.is_none()) {
        if (!workload.is_none())
            TESSEL_THROW(DSLError) << "SearchTask: give a workload name or a dag=, not both";
        return SearchTask(mark_constant(dag.cast<TensorDAG>(), constant, "SearchTask"), t);
    }
    if (workload.is_none())
        TESSEL_THROW(DSLError) << "SearchTask: give a registered workload's name (and params=) "
                                  "or a dag=";
    // A registered Python function stands for its name, as TVM's SearchTask(func=...) takes it.
    std::string name = py::isinstance<py::str>(workload)
                           ? workload.cast<std::string>()
                           : workload.attr("__name__").cast<std::string>();
    return SearchTask(name, to_params(params), t, std::nullopt, constant);
}

}  // namespace

void init_search_task(py::module_& m) {
    py::class_<SearchTask>(m, "SearchTask",
                           "A tuning task: a registered workload (or a DAG) for a target.")
        .def(py::init(&make_task), py::arg("workload") = py::none(),
             py::arg("params") = py::tuple(), py::arg("target") = "llvm", py::kw_only(),
             py::arg("dag") = py::none(), py::arg("constant") = std::vector<std::string>{},
             "SearchTask(\"matmul\", (64, 64, 64, \"float32\"), target=\"llvm\"), or "
             "SearchTask(dag=ts.make_tensor_dag(outputs), target=...); constant=[names] marks "
             "inputs constant (weights the search may lay out once: docs/tuning.md)")
        .def_property_readonly("constant", &SearchTask::constant,
                               "The names of the constant inputs (the layout-rewrite option).")
        .def_property_readonly("dag", &SearchTask::dag)
        .def_property_readonly("workload_name", &SearchTask::workload_name)
        .def_property_readonly("params",
                               [](const SearchTask& t) {
                                   py::list out;
                                   for (const WorkloadParam& p : t.params())
                                       out.append(from_param(p));
                                   return out;
                               })
        .def_property_readonly("target", &SearchTask::target)
        .def_property_readonly("hardware",
                               [](const SearchTask& t) { return options_dict(t.hardware()); })
        .def_property_readonly("dag_hash", &SearchTask::dag_hash_hex)
        .def_property_readonly("key", &SearchTask::key,
                               "What records key on: workload key, canonical target, DAG hash.")
        .def(
            "initial_schedule",
            [](const SearchTask& t) { return std::make_shared<Schedule>(t.initial_schedule()); },
            "A fresh schedule of the task's DAG (what every candidate starts from).")
        .def(
            "apply_record",
            [](const SearchTask& t, const std::string& json) {
                return std::make_shared<Schedule>(t.apply_record(json));
            },
            py::arg("json"),
            "Replays a Schedule.to_json() record on the task's DAG (ScheduleError for a record "
            "of another computation).")
        .def("to_json", &SearchTask::to_json)
        .def_static("from_json", &SearchTask::from_json, py::arg("json"),
                    "Rebuilds a task from to_json() in any process, checking the DAG's hash.")
        .def("__repr__", [](const SearchTask& t) { return "SearchTask(" + t.key() + ")"; });
}

}  // namespace tessel::python
