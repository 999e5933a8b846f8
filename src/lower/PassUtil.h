// Small helpers shared by the lowering passes (src/lower/): the no-op statement and index
// arithmetic that folds constants as it builds, so passes emit readable indices without running
// the full simplifier.
#pragma once

#include "tessel/ir/IR.h"

namespace tessel::internal {

/// The statement that does nothing: `Evaluate(0)`.
Stmt make_noop_stmt();
/// True for `Evaluate(c)` of an integer constant (what make_noop_stmt builds).
bool is_noop_stmt(const Stmt& s);

/// a + b, folding constants and dropping a zero operand. Operands have one type.
Expr fold_add(const Expr& a, const Expr& b);
/// a - b, folding constants and dropping a zero right operand.
Expr fold_sub(const Expr& a, const Expr& b);
/// a * b, folding constants, dropping a one operand and collapsing a zero operand.
Expr fold_mul(const Expr& a, const Expr& b);
/// `e` converted to the integer type `t` (unchanged when it already has it; constants refolded).
Expr cast_index(Type t, const Expr& e);
/// The wider of two integer types (int64 wins over int32; scalar).
Type wider_index_type(Type a, Type b);
/// The product of `extents` (folded), in type `t`; 1 for none.
Expr fold_product(const std::vector<Expr>& extents, Type t);
/// Whether `s` contains a thread barrier or a cross-thread reduction (a synchronisation of the
/// threads of a block).
bool has_thread_sync(const Stmt& s);

}  // namespace tessel::internal
