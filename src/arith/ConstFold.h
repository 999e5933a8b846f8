// Constant folding: evaluates one node whose operands are constants, exactly as ir/IR.h defines
// (integers wrap to their width, floats round to their declared precision).
#pragma once

#include "tessel/ir/IR.h"

namespace tessel::internal {

/// The constant value of `e` if all of its operands are constants (scalars or Broadcasts of
/// scalars) and its node can be folded; an undefined Expr otherwise. Does not recurse.
Expr const_fold(const Expr& e);

/// Folds every foldable node of `e`, bottom-up.
Expr const_fold_tree(const Expr& e);

/// True if an integer cast from `from` to `to` keeps every value (and bool → any integer).
bool is_lossless_cast(Type from, Type to);

}  // namespace tessel::internal
