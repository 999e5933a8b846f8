// Helpers shared by the tensor-expression DSL's source files (not a public API).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessel/te/Operation.h"

namespace tessel::internal {

/// A variable made by the DSL for a compute axis or a reduce axis. It is an ordinary Variable
/// node (same node type, identity, printing); the subclass only records which kind of axis it
/// names, so compute() can reject a reduce axis used outside its reduction.
struct AxisVariable : Variable {
    IterVarKind kind;
    AxisVariable(std::string n, Type t, IterVarKind k) : Variable(std::move(n), t), kind(k) {}
};

/// A new axis variable of `kind`.
Var make_axis_var(const std::string& name, Type t, IterVarKind kind);
/// The kind of a DSL axis variable, or nothing for any other variable.
std::optional<IterVarKind> axis_var_kind(const Variable* v);

/// `shape` converted to its index dtype (Operation.h, "Index dtype"). `what` names the tensor
/// in errors ("compute 'C'"); a non-integer or non-positive constant extent is a DSLError.
std::vector<Expr> normalize_shape(const std::vector<Expr>& shape, const std::string& what);
/// The index dtype of a normalized shape (int32 for a 0-d shape).
Type shape_index_dtype(const std::vector<Expr>& shape);

/// Checks the bodies of compute `name` over `axis` (Operation.h lists the rules) and returns the
/// reduction axes (empty when no body is a Reduce). Throws DSLError naming `name` and the axis.
std::vector<IterVar> verify_compute_body(const std::string& name, const std::vector<IterVar>& axis,
                                         const std::vector<Expr>& body);

}  // namespace tessel::internal
