// CUDA C generation: a lowered function to the source of its device functions and the launch
// plan that runs them (runtime/CudaLaunchPlan.h).
#pragma once

#include <string>
#include <vector>

#include "tessel/lower/LoweredFunc.h"
#include "tessel/runtime/CudaLaunchPlan.h"

namespace tessel::internal {

struct CudaCodegenOptions {
    /// Arguments (by name) that may share memory with others: no __restrict__ on them.
    std::vector<std::string> in_place;
    /// Fast math: float division and transcendental functions through the fast intrinsics
    /// (__expf, __fdividef ...); otherwise IEEE-accurate library calls.
    bool fast_math = false;
    /// Programmatic dependent launches (sm_90 and later: CudaLaunch::dependent): every kernel
    /// but the first waits for the one before it at entry, every kernel but the last lets the
    /// next one start early.
    bool dependent_launch = false;
};

/// The generated code of one lowered function.
struct CudaCode {
    /// A self-contained CUDA C translation unit (no #include): every device function is
    /// `extern "C" __global__`, named <function>_kernel<i>.
    std::string source;
    /// How to launch them; resources are left unknown (-1) for the NVRTC compile to fill in.
    CudaLaunchPlan plan;
    /// Per argument of the lowered function, the alignment in bytes the generated code assumes
    /// of its data pointer (16 where it uses float4 accesses, else the element size).
    std::vector<int64_t> arg_alignment;
};

/// Prints the kernels of `f` as CUDA C with their launch plan. `f` comes from lower() with a GPU
/// target: storage flattened and split into workspaces and kernels by split_host_device
/// (lower/SplitHostDevice.h; InternalError otherwise). `shape_vars` are the symbolic extents in
/// the signature's shape_vars() order. Throws CompileError for IR the backend cannot express
/// (naming what); the schedule's mistakes were reported by lower() as ScheduleErrors.
CudaCode codegen_cuda(const LoweredFunc& f, const std::vector<Var>& shape_vars,
                      const CudaCodegenOptions& options);

}  // namespace tessel::internal
