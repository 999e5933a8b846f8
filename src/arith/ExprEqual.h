// Structural equality of expressions, internal to the arithmetic module (the simplifier's
// matcher compares bound wildcards with it). Variables compare by identity.
#pragma once

#include "tessel/ir/IR.h"

namespace tessel::internal {

/// True if both expressions have the same structure, types and constants, and the same
/// variables, buffers and tensors (by identity). Reduce compares by identity.
bool expr_equal(const Expr& a, const Expr& b);

/// The two operands of a binary node (Add ... Or, including comparisons); false for other nodes.
bool binary_operands(const Expr& e, const Expr** a, const Expr** b);

/// Makes the binary node of type `t` (Add ... Or, comparisons) from two operands.
Expr make_binary(IRNodeType t, Expr a, Expr b);

}  // namespace tessel::internal
