// VectorizeLoops: loops of kind Vectorized → vector code.
//
// Expects: loops marked ForKind::Vectorized (by the `vectorize` schedule primitive), before or
// after storage flattening (Load/Store and BufferLoad/BufferStore are both handled).
//
// Guarantees: no For of kind Vectorized is left. A vectorized loop `for v in [min, min + n)` with
// a constant extent n >= 2 becomes its body with v replaced by `ramp(min, 1, n)`:
//  - expressions are widened lane-wise; a scalar operand meeting a vector is broadcast; a Ramp
//    plus/minus/times a loop-invariant scalar stays a Ramp (so `A[i*64 + v]` becomes the dense
//    vector access `A[ramp(i*64, 1, n)]`); other vector indices gather or scatter;
//  - stores and loads become n-lane Store / Load (BufferStore / BufferLoad keep the vector index);
//  - a Let / LetStmt whose value becomes a vector binds a fresh vector variable;
//  - inner loops whose bounds do not depend on v stay serial loops inside the vector lanes (their
//    bodies are widened: "an outer loop may be vectorized");
//  - an `if` on a condition that depends on v becomes predicated stores and loads (its branches
//    may only hold stores, lets and sequences of them);
//  - a loop whose body is a chain of `if`s without `else` (a split's tail guards) one of which
//    bounds v - min below a constant c < n (`v + x < e`, `v + x <= e`, x and e free of v, e - x
//    bounded by the enclosing loops) runs c lanes rounded up to a power of two, not n: the lanes
//    after them do nothing. A GEMM's peeled tail panel of 13 or 1 columns in a register tile of
//    32 computes 16 lanes or 1, not 32.
// A loop whose body cannot be vectorized correctly stays a loop, of kind Serial, with its body
// otherwise unchanged (still correct): an `if` whose branches write a buffer its condition
// reads, inner loops whose bounds depend on v, an `if` on a varying
// condition with other statements inside, an allocation, an assert or attribute on a varying
// value, a barrier, a store to a location that does not depend on v (a reduction into one
// element), or expressions that are already vectors of another width. A loop with extent 1
// becomes its body with v replaced by min; a non-constant or non-positive extent leaves a Serial
// loop.
#pragma once

#include "tessel/ir/IR.h"

namespace tessel {

/// Vectorizes every loop of kind Vectorized in `s` (see the file comment).
Stmt vectorize_loops(const Stmt& s);

}  // namespace tessel
