// InjectVirtualThreads: vthread-bound loops become serial work of the threads that run them.
//
// Expects: the loop nests of schedule_ops (before storage_flatten and unroll_loops).
//
// Guarantees: no loop is bound to "vthread". A vthread loop is first moved inside the threadIdx
// loops it directly encloses (each thread runs its share of every virtual thread), then pushed
// into its body as deep as it goes: what does not depend on the virtual thread (a shared-memory
// fetch, a barrier, a loop header) runs once per thread, and the loop wraps each statement that
// does. A buffer allocated inside the loop that such statements write gets one copy per virtual
// thread (a new outermost dimension): a register tile. The loop wrapping a statement is Unrolled
// when its extent is a constant of at most `max_unroll` (unroll_loops then interleaves the
// virtual threads' copies in one thread's instruction stream), Serial otherwise. A vthread loop
// of symbolic extent, around a cross-thread reduction, or whose buffers to copy have explicit
// strides (storage_align) stays one loop around its whole body. The result computes the same
// as long as virtual threads, like threads, do not race (every schedule the verifier accepts).
#pragma once

#include "tessel/ir/IR.h"

namespace tessel {

/// Turns vthread loops into serial work (see the file comment).
Stmt inject_virtual_threads(const Stmt& s, int64_t max_unroll);

}  // namespace tessel
