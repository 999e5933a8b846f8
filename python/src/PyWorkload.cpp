// Workloads and DAGs as data: ts.register_workload (a decorator, as TVM's
// auto_scheduler.register_workload), ts.make_workload, ts.workload_names, workload keys, and
// ts.TensorDAG with its JSON (ts.dag_to_json, ts.dag_from_json). A workload registered from Python
// is in the C++ registry: C++ code builds it through make_workload while the interpreter lives
// (the function is called with the GIL held; it is unregistered when the interpreter exits).
#include <mutex>
#include <set>
#include <thread>

#include <pybind11/numpy.h>

#include "PyWorkload.h"
#include "tessel/auto_schedule/task/Workload.h"
#include "tessel/te/Serialize.h"

namespace tessel::python {

namespace {

std::string type_name(py::handle v) {
    return py::str(py::type::of(v).attr("__name__")).cast<std::string>();
}

// A Python value as a workload parameter (Workload.h lists the kinds).
WorkloadParam to_param(py::handle v, size_t i) {
    auto fail = [&]() -> WorkloadParam {
        TESSEL_THROW(DSLError) << "workload parameter " << i << ": a " << type_name(v)
                               << " is no int, float, str, dtype or list of ints";
    };
    if (py::isinstance<py::bool_>(v)) return fail();
    if (py::isinstance<py::int_>(v)) {
        try {
            return v.cast<int64_t>();
        } catch (const py::cast_error&) {
            TESSEL_THROW(DSLError) << "workload parameter " << i << " does not fit int64";
        }
    }
    if (py::isinstance<py::float_>(v)) return v.cast<double>();
    if (py::isinstance<py::str>(v)) return v.cast<std::string>();
    if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
        std::vector<int64_t> list;
        for (py::handle e : v) {
            if (!py::isinstance<py::int_>(e) || py::isinstance<py::bool_>(e)) return fail();
            list.push_back(e.cast<int64_t>());
        }
        return list;
    }
    if (py::isinstance<py::type>(v) || py::isinstance<py::dtype>(v)) return to_type(v);
    return fail();
}

}  // namespace

WorkloadParams to_params(py::handle values) {
    if (!py::isinstance<py::list>(values) && !py::isinstance<py::tuple>(values))
        TESSEL_THROW(DSLError) << "workload parameters must be a list or tuple, not a "
                               << type_name(values);
    WorkloadParams params;
    size_t i = 0;
    for (py::handle v : values) params.push_back(to_param(v, i++));
    return params;
}

// A parameter as a Python value: dtypes as their names ("float32").
py::object from_param(const WorkloadParam& p) {
    return std::visit(
        [](const auto& v) -> py::object {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, Type>)
                return py::str(v.str());
            else
                return py::cast(v);
        },
        p);
}

// The tensors a Python workload returns: its inputs (placeholders), then its outputs.
namespace {

TensorDAG to_tensor_dag(py::handle result, const std::string& name) {
    std::string who = "workload '" + name + "'";
    if (py::isinstance<Tensor>(result) ||
        (!py::isinstance<py::list>(result) && !py::isinstance<py::tuple>(result)))
        TESSEL_THROW(DSLError) << who << " must return a list of tensors (inputs, then outputs), "
                               << "not a " << type_name(result);
    TensorDAG dag;
    for (py::handle h : result) {
        if (!py::isinstance<Tensor>(h))
            TESSEL_THROW(DSLError) << who << " returned a " << type_name(h) << " among its tensors";
        Tensor t = h.cast<Tensor>();
        bool input = as_placeholder(t.op()) != nullptr;
        if (input && !dag.outputs.empty())
            TESSEL_THROW(DSLError) << who << " returned placeholder '" << t.name()
                                   << "' after a computed tensor; return the inputs first";
        (input ? dag.inputs : dag.outputs).push_back(t);
    }
    return dag;
}

// A Python function held by a C++ builder: released with the GIL, or leaked once the
// interpreter is gone.
struct PyFunction {
    py::object f;
    explicit PyFunction(py::object fn) : f(std::move(fn)) {}
    ~PyFunction() {
        if (!Py_IsInitialized()) {
            f.release();
            return;
        }
        py::gil_scoped_acquire gil;
        f = py::object();
    }
};

// The names registered from Python, unregistered at interpreter exit.
std::set<std::string>& python_workloads() {
    static auto* names = new std::set<std::string>();
    return *names;
}
std::mutex python_workloads_mutex;

void register_python(const std::string& name, py::function f, bool replace) {
    std::vector<WorkloadParamSpec> specs;
    py::object parameters = py::module_::import("inspect").attr("signature")(f).attr("parameters");
    for (py::handle key : parameters) specs.push_back({key.cast<std::string>(), ParamKind::Any});
    auto fn = std::make_shared<PyFunction>(f);
    register_workload(
        name, specs,
        [fn, name](const WorkloadParams& params) {
            py::gil_scoped_acquire gil;
            py::tuple args(params.size());
            for (size_t i = 0; i < params.size(); ++i) args[i] = from_param(params[i]);
            return to_tensor_dag(fn->f(*args), name);
        },
        replace);
    std::lock_guard<std::mutex> lock(python_workloads_mutex);
    python_workloads().insert(name);
}

void unregister_python_workloads() {
    std::set<std::string> names;
    {
        std::lock_guard<std::mutex> lock(python_workloads_mutex);
        names.swap(python_workloads());
    }
    for (const std::string& n : names) unregister_workload(n);
}

// ts.register_workload(f), ts.register_workload("name")(f), ts.register_workload("name", f).
py::object register_workload_py(py::object name_or_func, py::object f, bool override_) {
    if (!py::isinstance<py::str>(name_or_func)) {
        if (!PyCallable_Check(name_or_func.ptr()))
            throw py::type_error(
                "register_workload: parameter 'func_name' expected a function "
                "or a name, not a " +
                type_name(name_or_func));
        register_python(name_or_func.attr("__name__").cast<std::string>(), name_or_func, override_);
        return name_or_func;
    }
    std::string name = name_or_func.cast<std::string>();
    if (!f.is_none()) {
        register_python(name, f, override_);
        return f;
    }
    return py::cpp_function([name, override_](py::function fn) {
        register_python(name, fn, override_);
        return fn;
    });
}

std::vector<Tensor> to_tensor_list(py::handle v) {
    if (py::isinstance<Tensor>(v)) return {v.cast<Tensor>()};
    return v.cast<std::vector<Tensor>>();
}

void def_tensor_dag(py::module_& m) {
    py::class_<TensorDAG>(m, "TensorDAG",
                          "A computation's tensors in argument order: its inputs (placeholders), "
                          "then its outputs.")
        .def(py::init([](py::object inputs, py::object outputs) {
                 TensorDAG dag{to_tensor_list(inputs), to_tensor_list(outputs)};
                 check_tensor_dag(dag, "TensorDAG");
                 return dag;
             }),
             py::arg("inputs"), py::arg("outputs"))
        .def_readonly("inputs", &TensorDAG::inputs)
        .def_readonly("outputs", &TensorDAG::outputs)
        .def_property_readonly("args", &TensorDAG::args, "inputs + outputs")
        .def("__repr__", [](const TensorDAG& d) {
            return "TensorDAG(" + std::to_string(d.inputs.size()) + " inputs, " +
                   std::to_string(d.outputs.size()) + " outputs)";
        });
    m.def(
        "make_tensor_dag",
        [](py::object outputs) { return make_tensor_dag(to_tensor_list(outputs)); },
        py::arg("outputs"), "The DAG of `outputs`, its inputs in topological order.");
    m.def(
        "dag_to_json",
        [](py::object dag, int indent) {
            if (py::isinstance<TensorDAG>(dag)) return dag_to_json(dag.cast<TensorDAG>(), indent);
            return dag_to_json(to_tensor_list(dag), indent);
        },
        py::arg("dag"), py::arg("indent") = -1,
        "A TensorDAG (or output tensors) as JSON (docs/workloads.md).");
    m.def("dag_from_json", &dag_from_json, py::arg("text"),
          "A new TensorDAG read from dag_to_json's output; DSLError if malformed.");
}

}  // namespace

void init_workload(py::module_& m) {
    def_tensor_dag(m);
    m.def("register_workload", &register_workload_py, py::arg("func_name"),
          py::arg("f") = py::none(), py::arg("override") = false,
          "Registers a workload function (decorator, as TVM's auto_scheduler.register_workload): "
          "called with the parameters, it returns its input tensors, then its output tensors.");
    m.def("unregister_workload", &unregister_workload, py::arg("name"));
    m.def("workload_names", &workload_names, "The registered workload names, sorted.");
    m.def(
        "workload_params",
        [](const std::string& name) {
            std::vector<std::pair<std::string, std::string>> out;
            for (const WorkloadParamSpec& s : workload_param_specs(name))
                out.emplace_back(s.name, param_kind_name(s.kind));
            return out;
        },
        py::arg("name"), "The declared parameters of a workload: (name, kind) pairs.");
    m.def(
        "make_workload",
        [](const std::string& name, py::object params) {
            return make_workload(name, to_params(params));
        },
        py::arg("name"), py::arg("params") = py::tuple(), "Builds a registered workload.");
    m.def(
        "workload_key",
        [](const std::string& name, py::object params) {
            return workload_key(name, to_params(params));
        },
        py::arg("name"), py::arg("params") = py::tuple(),
        "The workload key: the JSON array of the name and the parameters.");
    m.def(
        "parse_workload_key",
        [](const std::string& key) {
            auto [name, params] = parse_workload_key(key);
            py::list values;
            for (const WorkloadParam& p : params) values.append(from_param(p));
            return py::make_tuple(name, values);
        },
        py::arg("key"));
    m.def(
        "_make_workload_on_cpp_thread",
        [](const std::string& name, py::object params) {
            WorkloadParams p = to_params(params);
            std::string json;
            std::exception_ptr error;
            {
                py::gil_scoped_release release;
                std::thread t([&] {
                    try {
                        json = dag_to_json(make_workload(name, p));
                    } catch (...) {
                        error = std::current_exception();
                    }
                });
                t.join();
            }
            if (error) std::rethrow_exception(error);
            return json;
        },
        "Test-only: make_workload on a C++ thread (without the GIL), as the tuner's workers will "
        "call it; returns the DAG's JSON.");
    py::module_::import("atexit").attr("register")(py::cpp_function(&unregister_python_workloads));
}

}  // namespace tessel::python
