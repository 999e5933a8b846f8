// VerifyLowered: the last check before code generation.
//
// Expects: a function after storage flattening, vectorization and unrolling.
//
// Guarantees (checks; the first violation throws InternalError, whose message says what is wrong
// and prints the offending node and the whole function body):
//  - no TensorRead, Reduce, BufferLoad or BufferStore is left;
//  - no For of kind Vectorized or Unrolled is left; a constant For extent is non-negative;
//  - every variable is defined before use and in scope: loop variables, Let / LetStmt variables,
//    buffer data variables of the args or of Allocates, and variables of the args' shapes; a
//    variable is not bound again inside its own scope;
//  - every Load / Store goes through a defined buffer variable with the buffer's element type
//    (Allocate dtype or arg dtype);
//  - impure calls (thread_barrier) appear only as the whole value of an Evaluate.
// The function is not changed. Types inside expressions are already checked by each node's make().
#pragma once

#include "tessel/lower/LoweredFunc.h"

namespace tessel {

/// Checks that `f` is ready for code generation (see the file comment); throws InternalError.
void verify_lowered(const LoweredFunc& f);

}  // namespace tessel
