// CollectKernels: the kernels and workspaces of a function split by lower()'s split_host_device
// pass (lower/SplitHostDevice.h), with launch geometry and sizes as launch-plan expressions
// (runtime/CudaLaunchPlan.h).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "lower/DeviceKernels.h"
#include "tessel/lower/LoweredFunc.h"
#include "tessel/runtime/CudaLaunchPlan.h"

namespace tessel::internal {

/// One kernel: its statement and launch geometry.
struct DeviceKernel {
    std::string name;           ///< "<function>_kernel<i>"
    std::string stage;          ///< the buffer its root stage stores to (best effort)
    Stmt body;                  ///< the kernel, inside the host lets, ifs and asserts in scope
    std::array<Expr, 3> grid;   ///< blockIdx.x/y/z extents (int64, 1 where unbound)
    std::array<Expr, 3> block;  ///< threadIdx.x/y/z extents (int64, 1 where unbound)
};

/// The kernels and workspaces of a split function.
struct HostDeviceSplit {
    std::vector<DeviceKernel> kernels;  ///< in launch order
    std::vector<Var> workspace_vars;    ///< data variables of the workspaces, in plan order
    std::vector<Type> workspace_types;  ///< their element types
    std::vector<CudaWorkspace> workspaces;
};

/// Reads the kernels and workspaces of `f`, which split_host_device has split (InternalError
/// for anything else on the host side). `shape_vars` are the symbolic extents in signature
/// order; CompileError when a workspace size is not a launch-plan expression of them.
HostDeviceSplit collect_kernels(const LoweredFunc& f, const std::vector<Var>& shape_vars);

/// `e` (an integer expression over shape variables) as a LaunchExpr; CompileError naming `what`
/// for anything else (loads, other variables, truncating division ...).
LaunchExpr to_launch_expr(const Expr& e, const std::vector<Var>& shape_vars,
                          const std::string& what);

}  // namespace tessel::internal
