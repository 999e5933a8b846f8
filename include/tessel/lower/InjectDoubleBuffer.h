// InjectDoubleBuffer: pipelines the fetches of double-buffered (double_buffer) and pipelined
// (pipeline(depth)) shared stages.
//
// Expects: the loop nests of schedule_ops after insert_barriers (BufferLoad/BufferStore). A
// double-buffered stage's allocation is wrapped in AttrStmt("double_buffer_scope", data var), a
// pipelined one's in AttrStmt("pipeline_scope", depth), and the fetch nest of either in
// AttrStmt("double_buffer_write", data var); both sit in the body of the serial loop the stage is
// computed at, with the barriers insert_barriers placed there.
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
// barrier lies between. Pipelined stages (depth d, every stage at the loop with the same d):
//     allocate buf: [d] + shape (shared)
//     for k in [0, d - 1): fetch(lo + k) into buf[k] (if k < n), marked; cp_async_commit()
//     for v in [lo, lo + n):
//         cp_async_wait(d - 2); barrier
//         compute(v) reading buf[(v - lo) % d]
//         if v + d - 1 < lo + n: fetch(v + d - 1) into buf[(v + d - 1 - lo) % d], marked
//         cp_async_commit()
// where "marked" is AttrStmt("async_copy", d) around each fetch nest: lower_async_copies turns
// its stores into cp_async (until then they are plain stores, which is correct). The copy a
// fetch writes was last read in the previous iteration, before this iteration's barrier; every
// thread commits one group per iteration, so wait(d - 2) lands exactly the fetch of v.
// A loop of one iteration (or one simplified away) keeps its form with the marks removed.
// Throws ScheduleError when the marked loop is not serial with constant bounds, or its body
// mixes fetches with computation or holds another (not double-buffered) shared fetch or a
// barrier inside its computation, or marks its stages differently (double_buffer and pipeline,
// or two depths), naming the buffer and the primitive.
#pragma once

#include "tessel/ir/IR.h"

namespace tessel {

/// Pipelines double-buffered shared fetches (see the file comment).
Stmt inject_double_buffer(const Stmt& s);

}  // namespace tessel
