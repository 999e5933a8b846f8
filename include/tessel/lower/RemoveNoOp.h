// RemoveNoOp: deletes statements that do nothing.
//
// Expects: any IR.
//
// Guarantees: the result does the same as the input and contains none of these (each is removed
// or replaced by what remains of it; a statement that does nothing at all becomes `Evaluate(0)`,
// which is also what an entirely empty program becomes):
//  - a For with a constant extent <= 0, or whose body does nothing;
//  - an IfThenElse with a constant condition (replaced by the taken branch), or whose branches
//    both do nothing; an empty else branch is dropped, and an empty then branch with a non-empty
//    else becomes `if not c` over the else branch;
//  - an Evaluate of an expression without impure calls (only barriers have effects);
//  - an AssertStmt whose condition is the constant true;
//  - a Store of a buffer's element to itself (`A[i] = A[i]`, no predicates);
//  - no-ops inside a Seq (an empty Seq does nothing);
//  - a LetStmt, AttrStmt or Allocate whose body does nothing, and an Allocate whose buffer is
//    never used in its body (the body stays).
#pragma once

#include "tessel/ir/IR.h"

namespace tessel {

/// Removes statements that do nothing (see the file comment).
Stmt remove_no_op(const Stmt& s);

}  // namespace tessel
