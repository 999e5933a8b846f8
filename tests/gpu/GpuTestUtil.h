// GoogleTest helpers for GPU schedules (the checks are in GpuCheck.h):
//
//   std::optional<Module> m = expect_gpu_schedule_ok(s, {A, B, C}, /*reduction_length=*/64);
//   expect_gpu_run_matches_reference(s, {A, B, C}, 64);   // skips the test without a GPU
//
// expect_gpu_schedule_ok: SPMD interpreter (race detector) vs the reference, then the NVRTC
// compile for sm_90; expect_gpu_run_matches_reference: the kernel on the GPU vs the reference.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "gpu/GpuCheck.h"
#include "tessel/runtime/CUDA.h"

namespace tessel::testing {

/// A GPU program of `s` over `args` (inputs first, then every output of `s`).
inline GpuProgram gpu_program_of(const Schedule& s, const std::vector<Tensor>& args,
                                 int64_t reduction_length) {
    size_t n_in = args.size() - s.outputs().size();
    GpuProgram p{"schedule",
                 s,
                 {args.begin(), args.begin() + static_cast<long>(n_in)},
                 {args.begin() + static_cast<long>(n_in), args.end()},
                 {}};
    p.reduction_length = reduction_length;
    return p;
}

/// Checks 1 and 2 of GpuCheck.h on `p`; adds a failure and returns nullopt when one fails.
inline std::optional<Module> expect_gpu_program_ok(const GpuProgram& p, uint64_t seed = 1) {
    std::string phase = "lower/interpreter";
    try {
        GpuData d = make_gpu_data(p, seed);
        check_in_interpreter(p, d, /*bounds_checks=*/true);
        phase = std::string("build(\"") + kCudaCompileTarget + "\")";
        return compile_for_gpu(p);
    } catch (const std::exception& e) {
        ADD_FAILURE() << p.name << ": " << phase << " failed: " << e.what();
        return std::nullopt;
    }
}

/// Check 3 of GpuCheck.h on `p`: builds for this GPU, runs and compares; the caller skips
/// without a GPU (GTEST_SKIP must be called from the test body).
inline void expect_gpu_program_runs(const GpuProgram& p, uint64_t seed = 1) {
    std::string phase = std::string("build(\"") + gpu_run_target() + "\")";
    try {
        GpuData d = make_gpu_data(p, seed);
        Module m = compile_for_gpu(p, gpu_run_target());
        phase = "run on the GPU";
        check_on_gpu(p, m, d);
    } catch (const std::exception& e) {
        ADD_FAILURE() << p.name << ": " << phase << " failed: " << e.what();
    }
}

/// expect_gpu_program_ok for schedule `s` over `args` (inputs, then the outputs of `s`).
inline std::optional<Module> expect_gpu_schedule_ok(const Schedule& s,
                                                    const std::vector<Tensor>& args,
                                                    int64_t reduction_length = 1) {
    return expect_gpu_program_ok(gpu_program_of(s, args, reduction_length));
}

/// expect_gpu_program_runs for schedule `s` over `args`; skips the test without a GPU.
#define EXPECT_GPU_RUN_MATCHES_REFERENCE(s, args, reduction_length)              \
    do {                                                                         \
        if (!::tessel::cuda_available())                                         \
            GTEST_SKIP() << "no GPU: " << ::tessel::cuda_unavailable_reason();   \
        ::tessel::testing::expect_gpu_program_runs(                              \
            ::tessel::testing::gpu_program_of((s), (args), (reduction_length))); \
    } while (0)

}  // namespace tessel::testing
