// What the binding files share: one init function per Py<Concept>.cpp, and the conversions from
// Python values to tessel's (expressions, types, shapes). The conversions are glue only: every
// check that matters is made by the C++ API they call, which throws its typed errors.
#pragma once

#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessel/Error.h"
#include "tessel/Target.h"
#include "tessel/ir/IR.h"
#include "tessel/ir/IROperator.h"
#include "tessel/runtime/DataType.h"
#include "tessel/runtime/Device.h"
#include "tessel/te/Operation.h"

namespace tessel {
struct MeasureOptions;
}

namespace tessel::python {

namespace py = pybind11;

void init_error(py::module_& m);
void init_expr(py::module_& m);
void init_tensor(py::module_& m);
void init_reducer(py::module_& m);
void init_schedule(py::module_& m);
void init_lower(py::module_& m);
void init_build(py::module_& m);
void init_ndarray(py::module_& m);
void init_device(py::module_& m);
void init_target(py::module_& m);
void init_workload(py::module_& m);
void init_search_task(py::module_& m);
void init_op(py::module_& m);
void init_measure(py::module_& m);
void init_record(py::module_& m);
void init_search_space(py::module_& m);
void init_job(py::module_& m);

/// A Python value as an expression: Expr, IterVar (its variable), bool, int (int32 when it fits,
/// else int64), float (float32, as TVM's literals). Anything else is a DSLError naming `what`.
Expr to_expr(py::handle value, const char* what = "expression");
/// A shape: an int, an expression, or a tuple / list of them.
std::vector<Expr> to_shape(py::handle shape, const char* what);
/// A dtype: a string ("float32"), a numpy dtype or scalar type, or None for `fallback`.
Type to_type(py::handle dtype, Type fallback = Float(32));
/// An expression list from one value or a tuple / list.
std::vector<Expr> to_expr_list(py::handle values, const char* what);
/// One IterVar or a list of them (the `axis` argument of reductions).
std::vector<IterVar> to_axis_list(py::handle axis, const char* what);
/// The runtime's element type of a compiler type (the same code, bits and lanes).
DataType to_data_type(Type t);
/// A device from "cpu", "cpu:0", "cuda:1" or a Device.
Device to_device(py::handle device);
/// A target from a string (parsed: CompileError for a bad one) or a Target; TypeError otherwise.
Target to_target(py::handle target);
/// The targets of the active `with Target(...)` scopes, innermost last (guarded by the GIL).
std::vector<Target>& target_scope();
/// The arguments of lower() and build(): a list of tensors, in call order. A Var that is a
/// symbolic extent of one of them (TVM scripts list `n` beside the tensors) is dropped: its
/// value comes from the arrays' shapes. Anything else is a TypeError naming `what`.
std::vector<Tensor> to_arg_tensors(py::handle args, const char* what);
/// The Python type name of `h`, for error messages.
std::string py_type_name(py::handle h);

/// Runs `work` on a worker thread with the GIL released, checking for Ctrl-C (and other
/// signals) every few milliseconds: on KeyboardInterrupt the call returns at once (raising it)
/// and the worker's result is dropped when it finishes. `work` must not touch Python objects.
void run_interruptible(std::function<void()> work);
/// run_interruptible returning `work`'s value (kept in shared state, so an abandoned worker
/// never writes into a frame that is gone).
template <typename T>
T run_interruptible(std::function<T()> work) {
    auto result = std::make_shared<std::optional<T>>();
    run_interruptible(std::function<void()>([result, work] { *result = work(); }));
    return std::move(**result);
}
/// Waits up to `seconds` for workers abandoned by Ctrl-C (called at interpreter exit); returns
/// how many are still running.
int wait_for_abandoned_workers(double seconds);

}  // namespace tessel::python

namespace tessel::python {

/// Python's arithmetic, comparison and logic operators on a class whose values convert with
/// to_expr (Expr, IterVar). Comparisons build expressions; & | ~ are logical and / or / not.
template <typename Class>
void add_operators(Class& cls) {
    auto e = [](py::handle v) { return to_expr(v, "operator"); };
#define TESSEL_PY_BINARY(name, rname, expr)   \
    cls.def(                                  \
        name,                                 \
        [e](py::object a, py::object b) {     \
            Expr x = e(a), y = e(b);          \
            return expr;                      \
        },                                    \
        py::is_operator());                   \
    if (rname[0])                             \
        cls.def(                              \
            rname,                            \
            [e](py::object a, py::object b) { \
                Expr y = e(a), x = e(b);      \
                return expr;                  \
            },                                \
            py::is_operator());
    TESSEL_PY_BINARY("__add__", "__radd__", x + y)
    TESSEL_PY_BINARY("__sub__", "__rsub__", x - y)
    TESSEL_PY_BINARY("__mul__", "__rmul__", x * y)
    TESSEL_PY_BINARY("__truediv__", "__rtruediv__", x / y)
    TESSEL_PY_BINARY("__floordiv__", "__rfloordiv__", floordiv(x, y))
    TESSEL_PY_BINARY("__mod__", "__rmod__", floormod(x, y))
    TESSEL_PY_BINARY("__pow__", "__rpow__", tessel::pow(x, y))
    TESSEL_PY_BINARY("__and__", "__rand__", x && y)
    TESSEL_PY_BINARY("__or__", "__ror__", x || y)
    TESSEL_PY_BINARY("__lt__", "", x < y)
    TESSEL_PY_BINARY("__le__", "", x <= y)
    TESSEL_PY_BINARY("__gt__", "", x > y)
    TESSEL_PY_BINARY("__ge__", "", x >= y)
    TESSEL_PY_BINARY("__eq__", "", x == y)
    TESSEL_PY_BINARY("__ne__", "", x != y)
#undef TESSEL_PY_BINARY
    cls.def("__neg__", [e](py::object a) { return -e(a); });
    cls.def("__invert__", [e](py::object a) { return !e(a); });
    cls.def("__abs__", [e](py::object a) { return tessel::abs(e(a)); });
}

}  // namespace tessel::python
