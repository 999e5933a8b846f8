// InjectBoundsChecks: an assert before every memory access (the TESSEL_BOUNDS_CHECK mode).
//
// Expects: a flattened function (Load / Store only); vector accesses are fine (run it after
// VectorizeLoops). Buffer sizes come from the function's args (product of the shape) and from
// Allocates (product of the extents).
//
// Guarantees: before each statement, one AssertStmt per Load / Store in that statement's own
// expressions (not its sub-statements) checks that every lane of the index lies in [0, size):
// scalars directly, a Ramp by its first and last lanes (all lanes lie between them), a Broadcast
// by its value, other vector indices lane by lane where each lane can be written as a scalar
// (ramps, broadcasts, lane-wise arithmetic, casts, unpredicated loads). The message names the
// buffer, the index and the size: `bounds check: A[i * 64 + j] outside [0, 4096)`. Loads inside an
// if_then_else branch are checked only when that branch is taken (the assert is `!c || ok`);
// loads under a Let expression see its binding. Not checked: predicated accesses, accesses on
// buffers of unknown size, loads under a vector if_then_else, and vector indices that cannot be
// split into lanes. The body is otherwise unchanged.
#pragma once

#include "tessel/lower/LoweredFunc.h"

namespace tessel {

/// Inserts bounds-check asserts before the accesses of `f` (see the file comment).
LoweredFunc inject_bounds_checks(const LoweredFunc& f);

}  // namespace tessel
