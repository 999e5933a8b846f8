// UnrollLoops: loops of kind Unrolled (and small serial loops under an auto-unroll pragma) →
// straight-line copies of their bodies.
//
// Expects: any IR; loops of kind Unrolled come from the `unroll` schedule primitive, which has
// already checked that their extents are constant and within the cap. An
// `AttrStmt("pragma_auto_unroll_max_step", N)` (N an integer constant) asks for automatic
// unrolling of the serial loops inside it.
//
// Guarantees: no For of kind Unrolled is left. A loop `for v in [min, min + n)` of kind Unrolled
// with a constant extent n becomes the Seq of n copies of its body, copy k with v replaced by
// `min + k`, each copy simplified (arith's simplify: indices fold to constants); n <= 0 becomes a
// no-op (`Evaluate(0)`). Inner loops are unrolled before outer ones. Under the auto-unroll pragma,
// a Serial loop with a constant extent that contains no other loop (after its own inner loops
// were unrolled) is unrolled when its total steps (extent × the number of stores, evaluates and
// asserts in its body) are at most N; the pragma's AttrStmt is removed. An Unrolled loop whose
// extent is not constant becomes a Serial loop (correct, not unrolled).
//
// Throws InternalError for an Unrolled loop whose constant extent exceeds `max_unroll` (the
// schedule validates this earlier, so reaching it is a bug).
#pragma once

#include "tessel/ir/IR.h"

namespace tessel {

/// The attribute key of the auto-unroll pragma; its value is the maximum number of steps.
inline constexpr const char* kAutoUnrollMaxStep = "pragma_auto_unroll_max_step";

/// Unrolls the loops of `s` (see the file comment).
Stmt unroll_loops(const Stmt& s, int max_unroll = 512);

}  // namespace tessel
