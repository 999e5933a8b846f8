// InsertBarriers: thread_barrier() calls where threads of a block communicate through shared
// memory.
//
// Expects: the loop nests of schedule_ops (BufferLoad/BufferStore) or flattened IR (Load/Store);
// shared memory is what an Allocate of StorageScope::Shared allocates. Kernels are the
// thread-bound loop nests: a block is the body of the innermost blockIdx loop, or a threadIdx
// loop outside any blockIdx loop.
//
// Guarantees: inside every block, between a statement that writes a shared buffer and a later
// one that reads it (or between a read and a later overwrite), there is a barrier
// (thread_barrier(), or a thread_allreduce whose groups span warps) that every thread of the block
// reaches. A thread_allreduce within warps (power-of-two groups of at most 32 consecutive
// threads: CUDA reduces them with shuffles and no __syncthreads()) is no barrier: shared memory
// accessed on both sides of it gets a thread_barrier of its own, like any other statement. A
// barrier is placed at the outermost position of the block's uniform control flow that separates
// the two statements: in Seqs outside thread-divergent control flow, also at the end of a loop body
// for a conflict between one iteration and the next. Thread-divergent control flow is an IfThenElse
// whose condition, or a loop whose bounds, depend on threadIdx variables, and a threadIdx loop
// shorter than the block's extent on its axis. A barrier needed before such a statement is hoisted
// out of it; one needed inside it (a conflict between two statements both inside it) cannot be
// placed, and throws ScheduleError naming the buffer and showing the statement. The analysis is by
// buffer, not by element (conservative: it may add a barrier that was not strictly needed).
#pragma once

#include "tessel/ir/IR.h"

namespace tessel {

/// Inserts the barriers shared memory needs (see the file comment).
Stmt insert_barriers(const Stmt& s);

}  // namespace tessel
