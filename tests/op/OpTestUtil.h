// Helpers for the operator library's tests: run an operator's DAG under its default schedules
// and compare every output with the reference interpreter.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "correctness/ScheduleTestUtil.h"
#include "gpu/GpuCheck.h"
#include "tessel/driver/DefaultSchedule.h"

namespace tessel::testing {

/// The default "llvm" schedule of `outputs`, run in the loop interpreter and JIT-compiled
/// (expect_matches_reference), compared with the reference interpreter.
inline void expect_default_cpu_matches(const std::vector<Tensor>& outputs,
                                       int64_t reduction_length = 1) {
    Schedule s = op::default_schedule(outputs, Target("llvm"));
    expect_matches_reference(s, reduction_length);
}

/// The default "cuda" schedule of `outputs`, run as an SPMD program in the loop interpreter and
/// compiled by NVRTC (when the CUDA backend is built in), compared with the reference.
inline void expect_default_gpu_matches(const std::vector<Tensor>& outputs,
                                       int64_t reduction_length = 1, double magnitude = 1.0) {
    Target target(kCudaCompileTarget);
    GpuProgram p =
        gpu_program("op", op::default_schedule(outputs, target), reduction_length, magnitude);
    try {
        check_in_interpreter(p, make_gpu_data(p, 7));
        if (has_cuda_backend()) compile_for_gpu(p);
    } catch (const std::exception& e) {
        ADD_FAILURE() << "default GPU schedule failed: " << e.what();
    }
}

/// Both of the above.
inline void expect_default_schedules_match(const std::vector<Tensor>& outputs,
                                           int64_t reduction_length = 1) {
    expect_default_cpu_matches(outputs, reduction_length);
    expect_default_gpu_matches(outputs, reduction_length);
}

}  // namespace tessel::testing
