// InjectVirtualThreads: vthread-bound loops become serial work of the threads that run them.
//
// Expects: the loop nests of schedule_ops (before unroll_loops).
//
// Guarantees: no loop is bound to "vthread". A vthread loop is moved inside the threadIdx loops
// it directly encloses (a perfect nest whose body has no barrier: each thread then runs every
// virtual thread's share of the work), and becomes an Unrolled loop when its extent is a constant
// of at most `max_unroll` (unroll_loops then interleaves the virtual threads' copies of the body
// in one thread's instruction stream), a Serial loop otherwise. The result computes the same.
#pragma once

#include "tessel/ir/IR.h"

namespace tessel {

/// Turns vthread loops into serial work (see the file comment).
Stmt inject_virtual_threads(const Stmt& s, int64_t max_unroll);

}  // namespace tessel
