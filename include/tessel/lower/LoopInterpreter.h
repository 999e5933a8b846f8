// The loop-IR interpreter: executes lowered IR on host arrays, so that lowering and its passes are
// tested without a code generator (docs/design.md, decision 2). The reference interpreter
// (te/ReferenceInterpreter.h) says what a kernel should compute; this one says what a lowered
// kernel does compute.
//
//   LoweredFunc f = ...;                       // args A, B, C
//   HostArray a = HostArray::random(Float(32), {64, 64}, 1), b = ..., c(Float(32), {64, 64});
//   run_lowered(f, {&a, &b, &c});
//   EXPECT_CLOSE_TO_REFERENCE(c, evaluate_reference({C}, {{A, a}, {B, b}})[0], tol);
//
// Semantics: exactly those of ir/IR.h. Expressions are evaluated by ExprEvaluator in
// FloatMode::Exact (every float operation rounded to its declared type, float16 and bfloat16
// through float32), and values are stored in their dtype's own bytes. Statements:
//  - For: Serial, Unrolled and Vectorized loops run their iterations in increasing order.
//    Parallel loops too, and (with check_parallel_races) record which elements of memory that
//    lives outside the loop each iteration writes and reads: two iterations writing the same
//    element, or one reading an element another wrote (before or after), is a RuntimeError
//    "race in parallel loop".
//    ThreadBound loops run as an SPMD program (src/lower/LoopInterpreterSPMD.cpp): blockIdx loops
//    run their blocks one after another; every thread of a block runs the block body with its
//    own loop variables, lets and private allocations (shared allocations are one per block), a
//    threadIdx loop runs the calling thread's iteration only, and the threads advance in phases
//    between barriers (thread_barrier, thread_allreduce). A barrier not reached by every thread
//    is a RuntimeError "divergent barrier"; two threads touching one element of shared memory in
//    one phase, one of them writing, is a RuntimeError "race on shared memory". vthread loops
//    left in the IR run serially.
//  - LetStmt binds its variable over the body; AttrStmt runs its body (the value is not
//    evaluated); AssertStmt throws RuntimeError with its message when false; IfThenElse and Seq
//    as expected; Evaluate evaluates its value (thread_barrier() and thread_allreduce wait for
//    the block's other threads; outside a block a barrier is a no-op).
//  - cp_async reads its source when issued and puts its destination elements in flight;
//    cp_async_commit closes the thread's group; cp_async_wait(n) lands (writes) all but the
//    thread's newest n committed groups; barriers land nothing. Reading or writing an element
//    in flight, by any thread, is a RuntimeError "... before cp.async landed; a cp_async_wait is
//    missing" naming the buffer (src/lower/LoopInterpreterAsyncCopy.cpp).
//  - Allocate makes fresh storage of exactly the product of its extents (which must evaluate to
//    positive integers), filled with a poison pattern (NaN for floats, 0x5A bytes for integers),
//    never zeros, so that reading memory nobody wrote shows up. Every scope is host memory; inside
//    a block a shared Allocate is made once for all its threads.
//  - Load/Store index flat storage in elements, one element per lane of a vector index; lanes
//    masked off by a predicate (or by a vector if_then_else around a Load) neither read nor write
//    (masked loads read 0). BufferLoad/BufferStore index per dimension, checked against the
//    buffer's shape, then through its strides (compact row-major when empty) and elem_offset.
//  - Every access is bounds-checked against its allocation or array; a lane out of bounds throws
//    RuntimeError naming the buffer, the index (per dimension for BufferLoad/BufferStore), the
//    extent and the current values of the enclosing loop variables, e.g.
//    "store to C out of bounds: index 1024, size 1024 (i=32, j=0)". Accessing a buffer variable
//    that is neither allocated nor bound, or with another element type, throws RuntimeError.
//  - A step budget (one step per statement executed) stops runaway loops with RuntimeError
//    "step budget exceeded".
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "tessel/HostArray.h"
#include "tessel/ir/ExprEval.h"
#include "tessel/ir/IR.h"
#include "tessel/lower/LoweredFunc.h"

namespace tessel {

/// Knobs of the loop-IR interpreter.
struct LoopInterpreterOptions {
    /// Check that the iterations of Parallel loops touch disjoint elements (see the file comment).
    bool check_parallel_races = true;
    /// Most statements executed before giving up with RuntimeError "step budget exceeded".
    int64_t max_steps = 50'000'000;
};

/// Runs the lowered function `f` on `args`, one array per f.args in order; outputs are written
/// into their arrays. Before anything runs, throws RuntimeError naming the argument (position and
/// buffer name) when the count differs, an array is null, not ArrayStorage::Native, or its dtype or
/// shape differs from the buffer's. A buffer extent that is a plain variable is bound to the
/// array's extent. Throws RuntimeError for every failure while running (see the file comment).
void run_lowered(const LoweredFunc& f, const std::vector<HostArray*>& args,
                 const LoopInterpreterOptions& options = {});

/// Runs a bare statement (e.g. a pass's input or output in a test): `buffers` binds buffer data
/// variables (Handle-typed Vars: a Buffer's data, or the variable of a flat Load/Store) to
/// Native arrays whose dtype is the element type accessed through them; `scalars` binds free
/// scalar variables. Errors as for run_lowered.
void run_stmt(const Stmt& stmt, const std::vector<std::pair<Var, HostArray*>>& buffers,
              const std::vector<std::pair<Var, Value>>& scalars = {},
              const LoopInterpreterOptions& options = {});

}  // namespace tessel
