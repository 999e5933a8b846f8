// Tensors and operations: ts.placeholder, ts.compute (the lambda is traced into IR when compute is
// called), ts.reduce_axis, IterVar, and Operation's axes (C.op.axis, C.op.reduce_axis).
#include <sstream>

#include "PyCommon.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/te/Operation.h"

namespace tessel::python {

namespace {

// The number of positional parameters `f` takes, or -1 when it takes *args (or has no signature).
int positional_arity(const py::function& f) {
    py::object sig;
    try {
        sig = py::module_::import("inspect").attr("signature")(f);
    } catch (const py::error_already_set&) {
        return -1;
    }
    py::object kind = py::module_::import("inspect").attr("Parameter");
    int n = 0;
    for (py::handle p : sig.attr("parameters").attr("values")()) {
        py::object k = p.attr("kind");
        if (k.equal(kind.attr("VAR_POSITIONAL"))) return -1;
        if (k.equal(kind.attr("POSITIONAL_ONLY")) || k.equal(kind.attr("POSITIONAL_OR_KEYWORD"))) {
            if (p.attr("default").is(kind.attr("empty"))) ++n;
        }
    }
    return n;
}

// A traced body value: Python floats and ints standing alone take TVM's defaults (float32, int32).
Expr body_expr(py::handle v, const std::string& name) {
    std::string what = "compute '" + name + "'";
    if (py::isinstance<py::float_>(v)) return make_const(Float(32), v.cast<double>());
    try {
        return to_expr(v, what.c_str());
    } catch (const py::type_error& e) {  // what the traced function returned: a DSL error
        TESSEL_THROW(DSLError) << e.what();
    }
}

py::object compute_py(py::object shape, py::function f, const std::string& name) {
    std::vector<Expr> sh = to_shape(shape, ("compute '" + name + "' shape").c_str());
    int arity = positional_arity(f);
    if (arity >= 0 && arity != static_cast<int>(sh.size()))
        TESSEL_THROW(DSLError) << "compute '" << name << "': the function takes " << arity
                               << " indices for a " << sh.size() << "-D shape";
    bool multi = false;
    FComputeMulti traced = [&](const std::vector<Var>& vars) {
        py::tuple args(vars.size());
        for (size_t i = 0; i < vars.size(); ++i) args[i] = py::cast(vars[i]);
        py::object r = f(*args);
        std::vector<Expr> bodies;
        if (py::isinstance<py::tuple>(r) || py::isinstance<py::list>(r)) {
            multi = true;
            for (py::handle v : r) bodies.push_back(body_expr(v, name));
        } else {
            bodies.push_back(body_expr(r, name));
        }
        return bodies;
    };
    std::vector<Tensor> outs = compute_multi(sh, traced, name);
    if (!multi) return py::cast(outs.at(0));
    return py::cast(outs);
}

py::object extent_value(const Expr& e) {
    if (auto v = as_const_int(e)) return py::int_(*v);
    return py::cast(e);
}

py::tuple shape_tuple(const std::vector<Expr>& shape) {
    py::tuple t(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) t[i] = extent_value(shape[i]);
    return t;
}

std::string tensor_repr(const Tensor& t) {
    std::ostringstream os;
    os << "Tensor(name=" << t.name() << ", shape=(";
    for (size_t i = 0; i < t.ndim(); ++i) os << (i ? ", " : "") << to_string(t.shape()[i]);
    os << (t.ndim() == 1 ? ",)" : ")") << ", dtype=" << t.dtype() << ")";
    return os.str();
}

// A str argument, or a TypeError naming the function and the parameter.
std::string str_arg(py::handle o, const char* fn, const char* param) {
    if (py::isinstance<py::str>(o)) return o.cast<std::string>();
    throw py::type_error(std::string(fn) + "(): '" + param + "' must be a str, not " +
                         py_type_name(o));
}

}  // namespace

void init_tensor(py::module_& m) {
    py::class_<IterVar> iv(m, "IterVar", "An axis: a variable with its range and kind.");
    add_operators(iv);
    iv.def_property_readonly("var", &IterVar::var)
        .def_property_readonly("name", [](const IterVar& v) { return v.var().name(); })
        .def_property_readonly(
            "dom",
            [](const IterVar& v) {
                return py::make_tuple(extent_value(v.dom().min), extent_value(v.dom().extent));
            },
            "(min, extent)")
        .def_property_readonly("kind",
                               [](const IterVar& v) {
                                   return v.kind() == IterVarKind::Reduce ? "reduce" : "data_par";
                               })
        .def("__hash__", [](const IterVar& v) { return std::hash<const void*>()(v.get()); })
        .def("__repr__", [](const IterVar& v) {
            return "IterVar(" + v.var().name() + ", range(" + to_string(v.dom().min) + ", " +
                   to_string(v.dom().min + v.dom().extent) + "))";
        });

    py::class_<Operation>(m, "Operation", "The producer of one or more tensors.")
        .def_property_readonly("name", [](const Operation& op) { return op->name; })
        .def_property_readonly(
            "axis",
            [](const Operation& op) {
                const ComputeOpNode* c = as_compute(op);
                return c ? c->axis : std::vector<IterVar>{};
            },
            "The data-parallel axes (a compute's; empty for a placeholder).")
        .def_property_readonly("reduce_axis",
                               [](const Operation& op) {
                                   const ComputeOpNode* c = as_compute(op);
                                   return c ? c->reduce_axis : std::vector<IterVar>{};
                               })
        .def_property_readonly("body",
                               [](const Operation& op) {
                                   const ComputeOpNode* c = as_compute(op);
                                   return c ? c->body : std::vector<Expr>{};
                               })
        .def_property_readonly("is_placeholder",
                               [](const Operation& op) { return as_placeholder(op) != nullptr; })
        .def_property_readonly(
            "is_constant",
            [](const Operation& op) {
                const PlaceholderOpNode* p = as_placeholder(op);
                return p && p->constant;
            },
            "A constant placeholder (a weight: placeholder(..., constant=True)).")
        .def_property_readonly("num_outputs", &op_num_outputs)
        .def_property_readonly("input_tensors", &op_inputs)
        .def_property_readonly("shape",
                               [](const Operation& op) { return shape_tuple(op_shape(op)); })
        .def(
            "output",
            [](const Operation& op, int i) {
                if (i < 0 || i >= op_num_outputs(op))
                    throw py::index_error("operation '" + op->name + "' has " +
                                          std::to_string(op_num_outputs(op)) + " outputs");
                return op_output(op, i);
            },
            py::arg("index"))
        .def("__eq__",
             [](const Operation& a, py::object b) {
                 return py::isinstance<Operation>(b) && a.same_as(b.cast<Operation>());
             })
        .def("__hash__", [](const Operation& op) { return std::hash<const void*>()(op.get()); })
        .def("__repr__", [](const Operation& op) { return "Operation(" + op->name + ")"; });

    py::class_<Tensor>(m, "Tensor", "A tensor of the DSL: one output of an operation.")
        .def("__getitem__",
             [](const Tensor& t, py::object index) {
                 return t(to_expr_list(index, ("index of tensor '" + t.name() + "'").c_str()));
             })
        .def("__call__",
             [](const Tensor& t, py::args index) {
                 return t(to_expr_list(index, ("index of tensor '" + t.name() + "'").c_str()));
             })
        .def_property_readonly("name", &Tensor::name)
        .def_property_readonly("dtype", [](const Tensor& t) { return t.dtype().str(); })
        .def_property_readonly("shape", [](const Tensor& t) { return shape_tuple(t.shape()); })
        .def_property_readonly("ndim", &Tensor::ndim)
        .def_property_readonly("op", &Tensor::op)
        .def_property_readonly("value_index", &Tensor::value_index)
        .def("__eq__",
             [](const Tensor& a, py::object b) {
                 return py::isinstance<Tensor>(b) && same_tensor(a, b.cast<Tensor>());
             })
        .def("__hash__", [](const Tensor& t) { return TensorHash()(t); })
        .def("__repr__", &tensor_repr);

    m.def(
        "placeholder",
        [](py::object shape, py::object dtype, py::object name_obj, bool constant) {
            std::string name = str_arg(name_obj, "placeholder", "name");
            return placeholder(to_shape(shape, ("placeholder '" + name + "' shape").c_str()),
                               to_type(dtype), name, constant);
        },
        py::arg("shape"), py::arg("dtype") = "float32", py::arg("name") = "placeholder",
        py::kw_only(), py::arg("constant") = false,
        "An input tensor (dtype None: float32, as TVM's). constant=True marks a weight: the same "
        "values every call, so a schedule may lay it out once (Module.pre_transform).");
    m.def(
        "compute",
        [](py::object shape, py::object f, py::object name, py::object tag, py::object attrs) {
            if (!PyCallable_Check(f.ptr()))
                throw py::type_error("compute(): 'fcompute' is a function of the indices, not " +
                                     py_type_name(f));
            str_arg(tag, "compute", "tag");
            if (!attrs.is_none() && !(py::isinstance<py::dict>(attrs) && py::len(attrs) == 0))
                throw py::type_error(
                    "compute(): 'attrs' is not supported (tessel operations "
                    "carry no attributes)");
            return compute_py(shape, py::reinterpret_borrow<py::function>(f),
                              str_arg(name, "compute", "name"));
        },
        py::arg("shape"), py::arg("fcompute"), py::arg("name") = "compute", py::arg("tag") = "",
        py::arg("attrs") = py::none(),
        "A tensor computed by `fcompute(i, j, ...)` at every point of `shape`; a tuple of "
        "bodies makes a multi-output operation (a list of tensors). TVM's tag= is accepted "
        "and not kept.");
    m.def(
        "reduce_axis",
        [](py::object dom, py::object name_obj, py::object thread_tag) {
            std::string name = str_arg(name_obj, "reduce_axis", "name");
            if (!str_arg(thread_tag, "reduce_axis", "thread_tag").empty())
                throw py::type_error(
                    "reduce_axis(): 'thread_tag' is not supported: bind a loop "
                    "of the reduction to threadIdx.* with s[C].bind instead");
            if (!py::isinstance<py::tuple>(dom) && !py::isinstance<py::list>(dom))
                throw py::type_error("reduce_axis(): 'dom' is (begin, end), not " +
                                     py_type_name(dom));
            std::vector<Expr> d = to_expr_list(dom, ("reduce_axis '" + name + "'").c_str());
            if (d.size() != 2)
                TESSEL_THROW(DSLError) << "reduce_axis '" << name << "': dom is (begin, end)";
            Expr extent = is_zero(d[0]) ? d[1] : d[1] - d[0];
            if (auto b = as_const_int(d[0]), e = as_const_int(d[1]); b && e)
                extent = make_const(d[1].type(), *e - *b);
            return reduce_axis(Range(d[0], extent), name);
        },
        py::arg("dom"), py::arg("name") = "rv", py::arg("thread_tag") = "",
        "A reduction axis over [begin, end), as TVM's te.reduce_axis((begin, end)).");
    m.def(
        "flop_count",
        [](py::object outs) {
            if (py::isinstance<Tensor>(outs))
                return flop_count(std::vector<Tensor>{outs.cast<Tensor>()});
            return flop_count(outs.cast<std::vector<Tensor>>());
        },
        py::arg("outputs"), "Arithmetic operations of the DAG of `outputs`.");
}

}  // namespace tessel::python
