// PartitionLoops: splits loops so that their main part runs without bound guards.
//
// Expects: loop nests as lowering builds them, where a split of an extent that the factor does
// not divide leaves a guard such as
//     for io in range(0, 32):
//         for ii in range(0, 32):
//             if likely(io * 32 + ii < 1000):
//                 body
// Guards are IfThenElse statements and if_then_else calls; the `likely` hint is optional (any
// condition is tried) and is stripped where a guard is decided.
//
// Guarantees: the result does the same as the input. For a Serial, Parallel or Unrolled loop with
// constant min and extent whose body holds guards depending on the loop variable, the pass
// searches the range where a conjunct of a guard is provably true for every value of the inner
// loop variables (arith's can_prove, over symbolic intervals) and splits the loop into a head
// [min, b), a main part [b, e) and a tail [e, end) (head and tail only where non-empty), each a
// loop of the same kind. Inside every loop, and so in each part, a guard whose condition is
// provably true there is replaced by its then branch, one provably false by its else branch (or
// removed), and parts left without effect are dropped. Inner loops are partitioned inside each
// part with the outer ranges known, so the example above becomes io in [0, 31) guard-free, and
// for io = 31 the loop ii in [0, 8) guard-free (ii in [8, 32) does nothing and is dropped).
// A Serial loop (outside thread loops) with no main range but a head where one conjunct holds
// ending where a tail where another does begins (`t * 7 + c + rx >= 1` true from t = 1, `<= 14` up to
// t = 0: a row's two tiles under a window's padding) is cut there into two parts, each partitioned
// on its own.
// A split copies the loop's whole body once per part, so a loop is split only where it pays: at
// least half of its body's work (leaf statements weighted by the iterations of the loops around
// them) is under guards on its variable, and the split copies at most 8 loops (loops in the body
// times the parts added; unrolled and vectorized loops do not count). Otherwise its guards stay
// (still decided where the enclosing ranges prove them) and the loops inside, closer to the
// guarded statements, are considered on their own: a convolution's padding copy computed inside
// its reduction loops gets its row and column loops split, not every tile loop above it
// (docs/perf/conv-build-time.md).
// Narrowing (outside thread loops): a Serial loop with constant bounds whose every statement
// sits under a guard conjunct linear in the loop variable (a constant coefficient) and free of
// the variables bound inside the loop runs over the range where the conjunct holds instead,
// bounds in the enclosing loops' variables: `for ry in [0, 3): if (h + ry >= 1 && h + ry < 15)`
// becomes `for ry in [max(0, 1 - h), min(3, 15 - h))`, without the guard. This is tried before
// splitting: a split on such a guard leaves it in the head and tail parts wherever `h` is not
// fixed. Bounds that the enclosing ranges fix (a part of a split `h` loop) are constants, and the
// loop is then partitioned over the narrowed constant range as any other.
// Vectorized and thread-bound loops are never split (their bodies are still simplified), nor are
// loops with symbolic bounds. Loops with constant bounds split even when they hold barriers:
// every thread of a block runs the same parts.
//
// Unswitching (GPU kernels): inside a block's threadIdx loops, a loop nest without barriers whose
// guards cannot be split off by constant ranges (thread loops, vector loops, guards on the block
// and thread variables) becomes `if (P) { nest without those guards } else { nest }`, where P
// says, in the variables outside the nest, that each guard `a < b` (<=, >, >=) holds for every
// iteration of the nest (the upper bound of a - b over the nest is below 0). P uses no variable
// bound inside the nest, so a thread or a whole block takes one branch; guards whose P is false
// everywhere or true everywhere are left to the rest of the pass. A nest is unswitched once (no
// unswitch inside either branch). This takes the edge checks of shapes that the tiles do not
// divide out of the interior tiles: copies into shared memory of blocks inside the matrix, the
// stores of threads whose results lie inside it. Conjuncts are decided one by one: the ones proven
// (or assumed by an enclosing unswitch) are dropped, the rest stay.
// The pass does not simplify indices: run simplify afterwards.
#pragma once

#include "tessel/ir/IR.h"

namespace tessel {

/// The AttrStmt key of a skippable guard: `attr skippable_guard: if (c) body`, a guard whose
/// statement does the same whether or not it runs where `c` is false (ScheduleOps' padding guard:
/// an update adding zero). partition_loops splits and narrows loops on it as on any guard, and
/// then removes it: where the loops' ranges do not decide `c`, the statement runs unguarded, so
/// that no such guard is left as a branch in the generated code.
inline constexpr const char* kSkippableGuardAttr = "skippable_guard";

/// Partitions the loops of `s` around their guards (see the file comment).
Stmt partition_loops(const Stmt& s);

}  // namespace tessel
