// The checks every GPU schedule goes through, shared by the GPU correctness helpers
// (GpuTestUtil.h), the GPU schedule corpus tests and the GPU schedule fuzzer:
//  1. lower, run as an SPMD program in the loop-IR interpreter (race detector on; every access
//     checked against its buffer) and compare every output with the reference interpreter;
//  2. build for "cuda -arch=sm_90": NVRTC must compile the generated CUDA C (no GPU needed), and
//     the module must carry its "cu" and "ptx" sources;
//  3. with a GPU: run the kernel on random inputs, every output poisoned (NaN / 0x5A bytes)
//     before the launch, and compare every output with the reference within tolerance_for().
// The checks throw what tessel throws (ScheduleError from lower(), CompileError from NVRTC,
// RuntimeError from the interpreter or the driver) and GpuCheckError when results differ.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessel/HostArray.h"
#include "tessel/Tolerance.h"
#include "tessel/runtime/Module.h"
#include "tessel/schedule/Schedule.h"

namespace tessel::testing {

/// The target every GPU schedule compiles for in CI (NVRTC, without a GPU).
inline constexpr const char* kCudaCompileTarget = "cuda -arch=sm_90";

/// A complete GPU program: a schedule, its kernel's arguments and how to check its results.
struct GpuProgram {
    std::string name;
    Schedule schedule;
    std::vector<Tensor> inputs;   ///< the placeholders, in argument order
    std::vector<Tensor> outputs;  ///< then the outputs
    /// Concrete shapes, one per argument (inputs then outputs), for symbolic extents; empty when
    /// every extent is constant.
    std::vector<std::vector<int64_t>> shapes;
    int64_t reduction_length = 1;  ///< tolerance_for()'s K
    double magnitude = 1.0;        ///< tolerance_for()'s magnitude
    /// Inputs are small integers (1 to 4, many ties: argmax must keep the first index) instead of
    /// uniform floats in [-1, 1].
    bool integer_valued_inputs = false;

    /// inputs then outputs.
    std::vector<Tensor> args() const;
    /// The concrete shape of argument `i`.
    std::vector<int64_t> shape(size_t i) const;
};

/// A GPU program of `s` over its placeholders (in stage order) and outputs.
GpuProgram gpu_program(std::string name, Schedule s, int64_t reduction_length = 1,
                       double magnitude = 1.0);

/// Random inputs (never all zero) and the reference interpreter's outputs for them.
struct GpuData {
    std::vector<HostArray> inputs;
    std::vector<HostArray> expected;
};

/// Draws inputs from `seed` and evaluates the reference interpreter on them.
GpuData make_gpu_data(const GpuProgram& p, uint64_t seed);

/// Thrown by the checks below when a result differs from the reference or a module is incomplete.
struct GpuCheckError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Check 1 (file comment). Returns the lowered IR. `bounds_checks` lowers with the bounds-check
/// pass's asserts (lower/InjectBoundsChecks.h) as well: the interpreter checks every access
/// itself, so they test the pass on GPU IR, at twice the interpreter's time or more (the corpus
/// and the GPU fuzzer turn them on; docs/perf/ci-time.md).
std::string check_in_interpreter(const GpuProgram& p, const GpuData& d, bool bounds_checks = false);

/// Check 2: builds for `target` and checks the module's "cu" and "ptx" sources.
Module compile_for_gpu(const GpuProgram& p, const std::string& target = kCudaCompileTarget);

/// The target to build for when the kernel is to run here: the GPU's own architecture when
/// cuda_available(), else kCudaCompileTarget.
std::string gpu_run_target();

/// Check 3: runs `m` (built from `p` for this GPU) on device 0 and compares. Requires
/// cuda_available().
void check_on_gpu(const GpuProgram& p, const Module& m, const GpuData& d);

/// Compares outputs (one per p.outputs) with the expected ones; GpuCheckError naming the first
/// output out of tolerance and `where` ("interpreter", "GPU").
void compare_gpu_outputs(const GpuProgram& p, const std::vector<HostArray>& got, const GpuData& d,
                         const std::string& where);

}  // namespace tessel::testing
