// Structural equality of IR trees, up to renaming of the variables they bind.
//
// Two trees are equal when they have the same node kinds, types, constants (compared bit-exactly:
// NaN equals a NaN of the same bits, 0.0 differs from -0.0), intrinsics, For kinds and thread tags,
// storage scopes, attribute keys and assert messages, and their variables correspond:
//  - Variables *bound inside* the trees (For loop variables, Let/LetStmt variables, Reduce axes,
//    Allocate buffer variables, a CommReducer's lhs/rhs) correspond when bound at the same place;
//    their names do not matter. Bindings are scoped: a variable bound twice in one tree may
//    correspond to two different variables of the other.
//  - Free variables compare by identity, unless `map_free_vars` is set: then they must correspond
//    one-to-one, the correspondence fixed in order of first occurrence.
//  - Buffers compare by their fields: dtype, scope, shape, strides, elem_offset and data variable
//    (the last following the variable rules above; names are ignored). So a Buffer whose data
//    variable is bound by an Allocate in the tree compares like a bound variable, and a free one
//    by the identity of its storage (or by correspondence with `map_free_vars`).
//  - Tensors compare by identity, unless `map_free_vars` is set: then by a one-to-one
//    correspondence (fixed in order of first occurrence) between tensors of equal dtype, shape and
//    value_index.
//  - Reducers compare by structure (identity elements and combining expressions); their names are
//    labels and are ignored.
//
// structural_hash (ir/Hash.h) is consistent with this: trees equal with map_free_vars hash equal.
#pragma once

#include "tessel/ir/IR.h"

namespace tessel {

/// True if `a` and `b` are the same tree up to renaming of bound variables (see above); free
/// variables and tensors are matched by identity, or by a consistent one-to-one correspondence
/// when `map_free_vars` is true. Two undefined handles are equal.
bool structural_equal(const Expr& a, const Expr& b, bool map_free_vars = false);
/// The same for statements.
bool structural_equal(const Stmt& a, const Stmt& b, bool map_free_vars = false);

}  // namespace tessel
