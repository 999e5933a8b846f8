// SplitHostDevice: splits a lowered function for the CUDA backend into its kernels (device
// functions) and the host side (runtime/CudaLaunchPlan.h: workspaces, then launches in order).
//
// Expects the output of lower(): storage flattened, thread-bound loops in place. A *kernel* is a
// maximal statement whose outermost loop is bound to blockIdx.* or threadIdx.*. Outside kernels
// only these may appear:
//  - Seq, AttrStmt (skipped);
//  - Allocate of global scope: a workspace of the plan, allocated by the runtime for each call;
//  - LetStmt, IfThenElse and AssertStmt over shape variables: no host code runs them, so they are
//    moved into every kernel in their scope (a LetStmt binds its variable inside the kernel; a
//    kernel under an `if` does nothing when the condition is false; an assert is checked by the
//    kernels after it);
//  - a loop-free Store: a kernel of one thread;
//  - thread_barrier() (a no-op between kernels).
// Any loop outside every kernel is a ScheduleError naming the loop and the stage: it must be bound
// to a thread axis. Shared or local storage allocated outside a kernel is a ScheduleError too.
//
// Each kernel's launch geometry comes from its thread-bound loops: the grid (block) extent of an
// axis is the largest extent of a loop bound to it (verify_thread_mapping makes them all equal).
// Static limits are checked here: at most 1024 threads per block, grid.y and grid.z at most
// 65535, grid.x at most 2^31 - 1 (ScheduleError naming the stage and the excess).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "tessel/lower/LoweredFunc.h"
#include "tessel/runtime/CudaLaunchPlan.h"

namespace tessel::internal {

/// One kernel: its statement and launch geometry.
struct DeviceKernel {
    std::string name;          ///< "<function>_kernel<i>"
    std::string stage;         ///< the buffer its root stage stores to (best effort)
    Stmt body;                 ///< the kernel, inside the host lets, ifs and asserts in scope
    std::array<Expr, 3> grid;  ///< blockIdx.x/y/z extents (int64, 1 where unbound)
    std::array<Expr, 3> block;  ///< threadIdx.x/y/z extents (int64, 1 where unbound)
};

/// The kernels and workspaces of a lowered function.
struct HostDeviceSplit {
    std::vector<DeviceKernel> kernels;  ///< in launch order
    std::vector<Var> workspace_vars;    ///< data variables of the workspaces, in plan order
    std::vector<Type> workspace_types;  ///< their element types
    std::vector<CudaWorkspace> workspaces;
};

/// Splits `f` (see the file comment). `shape_vars` are the symbolic extents in signature order.
HostDeviceSplit split_host_device(const LoweredFunc& f, const std::vector<Var>& shape_vars);

/// `e` (an integer expression over shape variables) as a LaunchExpr; CompileError naming `what`
/// for anything else (loads, other variables, truncating division ...).
LaunchExpr to_launch_expr(const Expr& e, const std::vector<Var>& shape_vars,
                          const std::string& what);

/// The index of a thread tag: blockIdx.x/y/z → 0/1/2 and threadIdx.x/y/z → 0/1/2; -1 otherwise.
int thread_tag_axis(const std::string& tag);
/// True for blockIdx.x/y/z.
bool is_block_tag(const std::string& tag);

}  // namespace tessel::internal
