// Reductions: ts.sum / ts.max / ts.min / ts.prod over axes, ts.argmax / ts.argmin, and user
// reducers from ts.comm_reducer (as TVM's te.comm_reducer). ts.max(a, b) and ts.min(a, b) without
// `axis` are the element-wise larger / smaller value.
#include "PyCommon.h"
#include "tessel/te/Operation.h"

namespace tessel::python {

std::vector<IterVar> to_axis_list(py::handle axis, const char* what) {
    std::vector<IterVar> out;
    if (py::isinstance<IterVar>(axis)) return {axis.cast<IterVar>()};
    if (py::isinstance<py::tuple>(axis) || py::isinstance<py::list>(axis)) {
        for (py::handle a : axis) {
            if (!py::isinstance<IterVar>(a))
                TESSEL_THROW(DSLError)
                    << what << ": axis must be reduce axes (ts.reduce_axis), not "
                    << py::str(py::type::of(a)).cast<std::string>();
            out.push_back(a.cast<IterVar>());
        }
        return out;
    }
    TESSEL_THROW(DSLError) << what << ": axis must be a reduce axis or a list of them, not "
                           << py::str(py::type::of(axis)).cast<std::string>();
}

namespace {

Expr where_expr(py::handle where) {
    return where.is_none() ? Expr() : to_expr(where, "where");
}

using Builtin = Expr (*)(Expr, const std::vector<IterVar>&, Expr);
using Widening = Expr (*)(Expr, const std::vector<IterVar>&, Type, Expr);
using Binary = Expr (*)(Expr, Expr);

// ts.max(x, axis=k) reduces; ts.max(a, b) is element-wise. `widening` (sum, prod) takes dtype=,
// the accumulator's type.
void def_reduction(py::module_& m, const char* name, Builtin reduce, Binary binary,
                   Widening widening = nullptr) {
    auto body = [name, reduce, binary, widening](py::object a, py::object b, py::object axis,
                                                 py::object where, py::object dtype) {
        std::string fn = std::string(name) + ": parameter ";
        Expr x = to_expr(a, (fn + "'expr'").c_str());
        if (!axis.is_none()) {
            if (!b.is_none())
                TESSEL_THROW(DSLError) << "ts." << name << ": pass either two values or axis=";
            if (!dtype.is_none())
                return widening(x, to_axis_list(axis, name), to_type(dtype), where_expr(where));
            return reduce(x, to_axis_list(axis, name), where_expr(where));
        }
        if (b.is_none() || !binary)
            TESSEL_THROW(DSLError) << "ts." << name << ": missing axis= (the reduce axes)";
        if (!dtype.is_none())
            TESSEL_THROW(DSLError) << "ts." << name << ": dtype= is the accumulator of a "
                                   << "reduction (pass axis=)";
        return binary(x, to_expr(b, (fn + "'other'").c_str()));
    };
    if (widening)
        m.def(name, body, py::arg("expr"), py::arg("other") = py::none(), py::kw_only(),
              py::arg("axis") = py::none(), py::arg("where") = py::none(),
              py::arg("dtype") = py::none(),
              "Reduces over axis= (dtype=: the accumulator's type, e.g. \"float32\" for float16 "
              "or int8 values; it must hold every value of the source's type).");
    else
        m.def(
            name,
            [body](py::object a, py::object b, py::object axis, py::object where) {
                return body(a, b, axis, where, py::none());
            },
            py::arg("expr"), py::arg("other") = py::none(), py::kw_only(),
            py::arg("axis") = py::none(), py::arg("where") = py::none());
}

Expr py_max(Expr a, Expr b) {
    return max(a, b);
}
Expr py_min(Expr a, Expr b) {
    return min(a, b);
}
Expr py_add(Expr a, Expr b) {
    return a + b;
}
Expr py_mul(Expr a, Expr b) {
    return a * b;
}

// A constant of `t` from a Python number returned by an identity function.
Expr typed_value(py::handle v, Type t, const std::string& reducer) {
    Expr e = to_expr(v, ("comm_reducer '" + reducer + "' identity").c_str());
    if (e.type() == t) return e;
    if (auto i = as_const_int(e))
        return t.is_float() ? make_const(t, double(*i)) : make_const(t, *i);
    if (auto f = as_const_float(e); f && t.is_float()) return make_const(t, *f);
    return e;  // Reducer::instantiate reports the wrong type, naming the reducer
}

py::object pack(const std::vector<Expr>& values) {
    if (values.size() == 1) return py::cast(values[0]);
    return py::tuple(py::cast(values));
}

Reducer make_comm_reducer(py::function fcombine, py::function fidentity, const std::string& name) {
    // The Python callables live as long as the Reducer; each call takes the GIL (tracing runs
    // with it held, so this only matters if a Reducer dies on another thread).
    auto combine = [fcombine, name](const std::vector<Expr>& lhs, const std::vector<Expr>& rhs) {
        py::gil_scoped_acquire gil;
        py::object r = fcombine(pack(lhs), pack(rhs));
        return to_expr_list(r, ("comm_reducer '" + name + "' combine").c_str());
    };
    auto identity = [fidentity, name](const std::vector<Type>& types) {
        py::gil_scoped_acquire gil;
        py::tuple args(types.size());
        for (size_t i = 0; i < types.size(); ++i) args[i] = types[i].str();
        py::object r = fidentity(*args);
        std::vector<Expr> out;
        if (py::isinstance<py::tuple>(r) || py::isinstance<py::list>(r)) {
            size_t i = 0;
            for (py::handle v : r) {
                out.push_back(i < types.size() ? typed_value(v, types[i], name)
                                               : to_expr(v, "identity"));
                ++i;
            }
        } else {
            out.push_back(typed_value(r, types.at(0), name));
        }
        return out;
    };
    return comm_reducer(name, combine, identity);
}

}  // namespace

void init_reducer(py::module_& m) {
    def_reduction(m, "sum", &sum, &py_add, &sum);
    def_reduction(m, "prod", &prod, &py_mul, &prod);
    def_reduction(m, "max", &max, &py_max);
    def_reduction(m, "min", &min, &py_min);

    py::class_<Reducer>(m, "Reducer", "A commutative reducer (ts.comm_reducer).")
        .def_property_readonly("name", &Reducer::name)
        .def(
            "__call__",
            [](const Reducer& r, py::object source, py::object axis,
               py::object where) -> py::object {
                std::vector<IterVar> ax = to_axis_list(axis, r.name().c_str());
                if (py::isinstance<py::tuple>(source) || py::isinstance<py::list>(source))
                    return py::tuple(
                        py::cast(r(to_expr_list(source, r.name().c_str()), ax, where_expr(where))));
                return py::cast(r(to_expr(source, r.name().c_str()), ax, where_expr(where)));
            },
            py::arg("source"), py::arg("axis"), py::arg("where") = py::none(),
            "Reduces `source` (one value, or a tuple for a multi-value reducer) over `axis`.");
    m.def("comm_reducer", &make_comm_reducer, py::arg("fcombine"), py::arg("fidentity"),
          py::arg("name") = "reduce",
          "A user reducer: fcombine(x, y) combines (tuples for several values); fidentity(*dtypes) "
          "returns the identity (a number or an expression, or a tuple of them).");
    m.def(
        "argmax",
        [](py::object index, py::object value, py::object axis, py::object where) {
            return py::tuple(py::cast(argmax(to_expr(index, "argmax"), to_expr(value, "argmax"),
                                             to_axis_list(axis, "argmax"), where_expr(where))));
        },
        py::arg("index"), py::arg("value"), py::arg("axis"), py::arg("where") = py::none(),
        "(index, value) of the largest value; return both from a compute lambda.");
    m.def(
        "argmin",
        [](py::object index, py::object value, py::object axis, py::object where) {
            return py::tuple(py::cast(argmin(to_expr(index, "argmin"), to_expr(value, "argmin"),
                                             to_axis_list(axis, "argmin"), where_expr(where))));
        },
        py::arg("index"), py::arg("value"), py::arg("axis"), py::arg("where") = py::none());
}

}  // namespace tessel::python
