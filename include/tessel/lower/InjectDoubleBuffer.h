// InjectDoubleBuffer: pipelines the fetches of double-buffered shared stages (double_buffer).
//
// Expects: the loop nests of schedule_ops after insert_barriers (BufferLoad/BufferStore). A
// double-buffered stage's allocation is wrapped in AttrStmt("double_buffer_scope", data var) and
// its fetch nest in AttrStmt("double_buffer_write", data var); both sit in the body of the serial
// loop the stage is computed at, with the barriers insert_barriers placed there.
//
// Guarantees: for such a loop `for v in [lo, lo + n)` whose body is fetches then computation
// (barriers between them dropped), the result computes the same:
//     allocate buf: [2] + shape (shared)              // two copies, hoisted out of the loop
//     fetch(lo) into buf[0]; barrier
//     allocate stage registers (local)
//     for v in [lo, lo + n - 1):
//         fetch(v + 1) loads into registers          // global loads in flight...
//         compute(v) reading buf[(v - lo) % 2]       // ... while this computes
//         registers into buf[(v + 1 - lo) % 2]
//         barrier
//     compute(lo + n - 1) reading buf[(n - 1) % 2]
// One barrier per iteration suffices: a copy is rewritten two iterations after it was read, and a
// barrier lies between. A loop of one iteration (or one simplified away) keeps its form with the
// marks removed. Throws
// ScheduleError when the marked loop is not serial with constant bounds, or its body mixes
// fetches with computation or holds another (not double-buffered) shared fetch or a barrier
// inside its computation, naming the buffer.
#pragma once

#include "tessel/ir/IR.h"

namespace tessel {

/// Pipelines double-buffered shared fetches (see the file comment).
Stmt inject_double_buffer(const Stmt& s);

}  // namespace tessel
