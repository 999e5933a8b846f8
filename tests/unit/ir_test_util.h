// Small builders shared by the IR unit tests: tensors and reducers without the te/ DSL.
#pragma once

#include <string>
#include <vector>

#include "tessel/ir/IR.h"
#include "tessel/ir/IROperator.h"

namespace tessel::test {

/// A placeholder-like tensor named `name` (its operation is a bare Placeholder OperationNode).
inline Tensor make_tensor(const std::string& name, std::vector<Expr> shape,
                          Type dtype = Float(32)) {
    auto* n = new TensorNode();
    n->op = Operation(new OperationNode(OpKind::Placeholder, name));
    n->shape = std::move(shape);
    n->dtype = dtype;
    n->name = name;
    return Tensor(n);
}

/// The sum reducer over type t, named `name`.
inline CommReducer sum_reducer(Type t = Float(32), const std::string& name = "sum") {
    Var x("x", t), y("y", t);
    return CommReducer(name, {x}, {y}, {x + y}, {make_zero(t)});
}

/// A reduction axis k over [min, min + extent).
inline IterVar make_reduce_axis(const std::string& name, Expr min, Expr extent) {
    return IterVar(Var(name), Range(std::move(min), std::move(extent)), IterVarKind::Reduce);
}

}  // namespace tessel::test
