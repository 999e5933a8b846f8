// Expressions: ts.var, ts.const, arithmetic and comparison operators, math intrinsics, casts,
// select / if_then_else. Python ints become int32 literals (int64 past int32), floats float64
// literals; a literal takes the other operand's type (C++ rules, ir/IROperator.h).
//
// bool() of an expression raises DSLError: Python's `if`, `and`, `or`, `not` and the built-in
// max()/min() would otherwise mis-trace a compute lambda silently.
#include "PyCommon.h"
#include "tessel/ir/IRPrinter.h"

namespace tessel::python {

namespace {

// A numpy scalar (np.float32(2), np.int64(3)) as the Python number it holds.
py::handle as_python_number(py::handle value, py::object* keep) {
    if (py::hasattr(value, "dtype") && py::hasattr(value, "item") && py::hasattr(value, "ndim") &&
        value.attr("ndim").cast<int>() == 0) {
        *keep = value.attr("item")();
        return *keep;
    }
    return value;
}

[[noreturn]] void throw_truth_value_error() {
    TESSEL_THROW(DSLError)
        << "a symbolic expression has no truth value: Python's if, and, or, not, max() and "
           "min() cannot be traced. Use ts.if_then_else / ts.select for conditions, & | ~ for "
           "logic, and ts.max / ts.min for the larger / smaller of two values";
}

std::string expr_repr(const Expr& e) {
    return to_string(e);
}

}  // namespace

Expr to_expr(py::handle value, const char* what) {
    py::object keep;
    value = as_python_number(value, &keep);
    if (py::isinstance<Expr>(value)) return value.cast<Expr>();
    if (py::isinstance<IterVar>(value)) return value.cast<IterVar>().var();
    if (py::isinstance<py::bool_>(value)) return make_const(Bool(), value.cast<bool>() ? 1 : 0);
    if (py::isinstance<py::int_>(value)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
        if (overflow)
            TESSEL_THROW(DSLError) << what << ": the integer " << py::str(value).cast<std::string>()
                                   << " does not fit int64";
        if (v >= INT32_MIN && v <= INT32_MAX) return Expr(static_cast<int>(v));
        return Expr(static_cast<int64_t>(v));
    }
    if (py::isinstance<py::float_>(value)) return Expr(value.cast<double>());
    throw py::type_error(std::string(what) + ": expected an expression, an axis or a number, got " +
                         py::str(py::type::of(value).attr("__name__")).cast<std::string>());
}

std::vector<Expr> to_expr_list(py::handle values, const char* what) {
    std::vector<Expr> out;
    if (py::isinstance<py::tuple>(values) || py::isinstance<py::list>(values)) {
        for (py::handle v : values) out.push_back(to_expr(v, what));
    } else {
        out.push_back(to_expr(values, what));
    }
    return out;
}

std::vector<Expr> to_shape(py::handle shape, const char* what) {
    return to_expr_list(shape, what);
}

Type to_type(py::handle dtype, Type fallback) {
    if (dtype.is_none()) return fallback;
    if (py::isinstance<py::str>(dtype)) return Type::parse(dtype.cast<std::string>());
    // numpy dtypes and scalar types (np.float32, np.dtype("int8")) name themselves.
    try {
        py::object np_dtype = py::module_::import("numpy").attr("dtype")(dtype);
        std::string name = np_dtype.attr("name").cast<std::string>();
        return Type::parse(name);
    } catch (const py::error_already_set&) {
        TESSEL_THROW(DSLError) << "not a dtype: " << py::repr(dtype).cast<std::string>()
                               << " (expected e.g. \"float32\")";
    }
}

DataType to_data_type(Type t) {
    DataTypeCode code = DataTypeCode::Float;
    switch (t.code) {
        case TypeCode::Int: code = DataTypeCode::Int; break;
        case TypeCode::UInt: code = DataTypeCode::UInt; break;
        case TypeCode::Float: code = DataTypeCode::Float; break;
        case TypeCode::BFloat: code = DataTypeCode::BFloat; break;
        case TypeCode::Bool: return DataType{DataTypeCode::Bool, 8, t.lanes};
        case TypeCode::Handle: code = DataTypeCode::Handle; break;
    }
    return DataType{code, t.bits, t.lanes};
}

void init_expr(py::module_& m) {
    py::class_<Expr> expr(m, "Expr", "A symbolic expression (immutable).");
    add_operators(expr);
    expr.def_property_readonly("dtype", [](const Expr& e) { return e.type().str(); })
        .def(
            "astype", [](const Expr& e, py::object t) { return cast(to_type(t), e); },
            py::arg("dtype"), "The expression converted to `dtype`.")
        .def(
            "same_as", [](const Expr& a, const Expr& b) { return a.same_as(b); },
            "True if both are the same node (identity, not structure).")
        .def("__bool__", [](const Expr&) -> bool { throw_truth_value_error(); })
        .def("__int__",
             [](const Expr& e) {
                 if (auto v = as_const_int(e)) return *v;
                 TESSEL_THROW(DSLError) << "int(): " << to_string(e) << " is not a constant";
             })
        .def("__float__",
             [](const Expr& e) {
                 if (auto v = as_const_float(e)) return *v;
                 if (auto v = as_const_int(e)) return static_cast<double>(*v);
                 TESSEL_THROW(DSLError) << "float(): " << to_string(e) << " is not a constant";
             })
        .def("__hash__", [](const Expr& e) { return std::hash<const void*>()(e.get()); })
        .def("__str__", &expr_repr)
        .def("__repr__", &expr_repr);
    expr.attr("__array_ufunc__") = py::none();  // numpy scalars defer to our reflected operators

    py::class_<Var, Expr>(m, "Var", "A variable: identity by object, the name only labels it.")
        .def_property_readonly("name", &Var::name);

    m.def(
        "var", [](const std::string& name, py::object t) { return Var(name, to_type(t, Int(32))); },
        py::arg("name") = "v", py::arg("dtype") = "int32",
        "A new variable (e.g. a symbolic size).");
    m.def(
        "const",
        [](py::object value, py::object dtype) {
            Expr e = to_expr(value, "const: parameter 'value'");
            if (dtype.is_none()) {
                if (e.type() == Float(64) && py::isinstance<py::float_>(value))
                    return make_const(Float(32), *as_const_float(e));
                return e;
            }
            Type t = to_type(dtype);
            if (auto i = as_const_int(e)) {
                if (t.is_float()) return make_const(t, static_cast<double>(*i));
                if (t.is_int_or_uint() && (*i < t.min_int() || *i > t.max_int()))
                    TESSEL_THROW(DSLError) << "const: " << *i << " does not fit " << t;
                return make_const(t, *i);
            }
            if (!t.is_float())
                TESSEL_THROW(DSLError) << "const: the float " << to_string(e) << " cannot be a "
                                       << t << " (cast it explicitly)";
            return make_const(t, *as_const_float(e));
        },
        py::arg("value"), py::arg("dtype") = py::none(),
        "A constant: int32 / float32 by default, else of `dtype`.");
    m.def(
        "cast",
        [](py::object t, py::object v) {
            return cast(to_type(t), to_expr(v, "cast: parameter 'value'"));
        },
        py::arg("dtype"), py::arg("value"), "`value` converted to `dtype`.");

    // The argument `value` of parameter `param` of function `fn`, named in a TypeError.
    auto e = [](py::handle value, const char* fn, const char* param) {
        return to_expr(value, (std::string(fn) + ": parameter '" + param + "'").c_str());
    };
    m.def(
        "select",
        [e](py::object c, py::object t, py::object f) {
            return select(e(c, "select", "condition"), e(t, "select", "true_value"),
                          e(f, "select", "false_value"));
        },
        py::arg("condition"), py::arg("true_value"), py::arg("false_value"),
        "Both values are evaluated; the condition picks one.");
    m.def(
        "if_then_else",
        [e](py::object c, py::object t, py::object f) {
            return if_then_else(e(c, "if_then_else", "condition"),
                                e(t, "if_then_else", "true_value"),
                                e(f, "if_then_else", "false_value"));
        },
        py::arg("condition"), py::arg("true_value"), py::arg("false_value"),
        "Only the taken branch is evaluated (safe for guarded reads).");
#define TESSEL_DEF_BINARY(fn, doc)                                                           \
    m.def(                                                                                   \
        #fn, [e](py::object a, py::object b) { return fn(e(a, #fn, "a"), e(b, #fn, "b")); }, \
        py::arg("a"), py::arg("b"), doc)
    TESSEL_DEF_BINARY(floordiv, "Division rounding toward -infinity.");
    TESSEL_DEF_BINARY(floormod, "Remainder of floordiv (the divisor's sign).");
    TESSEL_DEF_BINARY(truncdiv, "C-style division rounding toward zero.");
    TESSEL_DEF_BINARY(truncmod, "Remainder of truncdiv.");
    TESSEL_DEF_BINARY(pow, "x ** y (floats).");
#undef TESSEL_DEF_BINARY
#define TESSEL_DEF_UNARY(fn) \
    m.def(                   \
        #fn, [e](py::object x) { return fn(e(x, #fn, "x")); }, py::arg("x"))
    TESSEL_DEF_UNARY(exp);
    TESSEL_DEF_UNARY(exp2);
    TESSEL_DEF_UNARY(log);
    TESSEL_DEF_UNARY(log2);
    TESSEL_DEF_UNARY(sqrt);
    TESSEL_DEF_UNARY(rsqrt);
    TESSEL_DEF_UNARY(tanh);
    TESSEL_DEF_UNARY(sigmoid);
    TESSEL_DEF_UNARY(erf);
    TESSEL_DEF_UNARY(sin);
    TESSEL_DEF_UNARY(cos);
    TESSEL_DEF_UNARY(abs);
    TESSEL_DEF_UNARY(floor);
    TESSEL_DEF_UNARY(ceil);
    TESSEL_DEF_UNARY(round);
    TESSEL_DEF_UNARY(trunc);
    TESSEL_DEF_UNARY(isnan);
    TESSEL_DEF_UNARY(round_tf32);
#undef TESSEL_DEF_UNARY
    m.def(
        "fma",
        [e](py::object a, py::object b, py::object c) {
            return fma(e(a, "fma", "a"), e(b, "fma", "b"), e(c, "fma", "c"));
        },
        py::arg("a"), py::arg("b"), py::arg("c"), "a * b + c, rounded once.");
    m.def(
        "max_value", [](py::object t) { return max_value(to_type(t)); }, py::arg("dtype"));
    m.def(
        "min_value", [](py::object t) { return min_value(to_type(t)); }, py::arg("dtype"));
    m.def(
        "inf_value", [](py::object t) { return inf_value(to_type(t)); }, py::arg("dtype"));
}

}  // namespace tessel::python
