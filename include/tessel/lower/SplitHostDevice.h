// SplitHostDevice: for GPU targets, the last rewrite of lower(): the function becomes a host
// program of workspaces and kernel launches, each kernel marked by an AttrStmt.
//
// Expects: a lowered function (storage flattened, thread-bound loops in place). A *kernel* is a
// maximal statement whose outermost loop is bound to blockIdx.* or threadIdx.*. Outside kernels
// only these may appear:
//  - Seq, AttrStmt (dropped);
//  - Allocate of global scope: a *workspace*, allocated by the runtime for each call;
//  - LetStmt, IfThenElse and AssertStmt over shape variables: no host code runs them, so they are
//    moved into every kernel in their scope (a LetStmt binds its variable inside the kernel; a
//    kernel under an `if` does nothing when the condition is false; an assert is checked by the
//    kernels after it);
//  - a loop-free Store: a kernel of one thread;
//  - thread_barrier() (a no-op between kernels; dropped).
// Any loop outside every kernel is a ScheduleError naming the loop and the stage (bind it to a
// thread axis); so are shared or local storage allocated outside a kernel and a cross-thread
// reduction outside every kernel. The target's limits are checked where the extents are
// constant: threads per block (Target::max_threads_per_block()), grid.y and grid.z at most 65535,
// grid.x at most 2^31 - 1 (ScheduleError naming the kernel, the stage and the excess).
//
// Guarantees: the body is `Allocate` of each workspace (in first-use order, outermost first, its
// extents over shape variables only) around a Seq of kernels, each
// `AttrStmt(kDeviceKernelAttr, <index>, kernel)` in launch order, the kernel being its root loop
// inside the host lets, ifs and asserts in its scope. Consecutive kernels that depend on each
// other in no way, each a single blockIdx.x loop that synchronises nothing, has no shared memory
// and stores only to workspaces, under the same lets, ifs and asserts, are one kernel: each
// part's blocks after the previous part's along blockIdx.x (docs/cuda.md, "From schedule to
// launch"; TESSEL_CUDA_MERGE_KERNELS=0 turns it off). Running the split function in the loop
// interpreter computes what the unsplit one does. Idempotent: a function already split is
// returned as it is (kernels renumbered).
#pragma once

#include "tessel/Target.h"
#include "tessel/lower/LoweredFunc.h"

namespace tessel {

/// The AttrStmt key that marks a kernel; its value is the kernel's index (int32), in launch order.
inline constexpr const char* kDeviceKernelAttr = "device_kernel";

/// Splits `f` into workspaces and kernels for GPU target `target` (see the file comment).
LoweredFunc split_host_device(const LoweredFunc& f, const Target& target);

/// True when `f`'s body is split (it contains a kernel marker).
bool is_host_device_split(const LoweredFunc& f);

}  // namespace tessel
