// The GPU schedule fuzzer: random steps (StepGenerator with StepMix::Gpu) on the schedule fuzzer's
// operator suite, completed into GPU programs (GpuCompletion.h), then checked (GpuCheck.h): the
// SPMD interpreter with the race detector against the reference, the NVRTC compile, and with a
// GPU the kernel on the GPU against the reference.
//
// Environment (README.md lists them):
//   TESSEL_GPU_FUZZ_CASES  complete GPU programs to check (default 40, the CI run; the GPU host
//                          runs 300 or more); schedules rejected on the way are drawn again, up
//                          to 20 draws per case
//   TESSEL_GPU_FUZZ_SEED   the base seed (default 20241123); draw k uses a seed derived from it
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fuzz/support/StepGenerator.h"
#include "gpu/GpuCheck.h"

namespace tessel::testing {

/// How a GPU fuzz run is configured.
struct GpuFuzzConfig {
    int64_t cases = 40;
    uint64_t seed = 20241123;
    int max_attempts = 10;  ///< random primitives per draw: uniform in [1, max_attempts]
    /// The defaults, overridden by the TESSEL_GPU_FUZZ_* environment variables.
    static GpuFuzzConfig from_env();
};

/// How one draw ended.
enum class GpuVerdict {
    PassedOnGpu,   ///< interpreter and GPU both match the reference
    CompiledOnly,  ///< no GPU here: the interpreter matches and NVRTC compiles
    Rejected,      ///< a ScheduleError from lower() or build(), or the completion refused
    Budget,        ///< the interpreter's step budget ran out (slow, not wrong)
    Failed,        ///< a bug: wrong result, race, out-of-bounds access, NVRTC error, crash ...
};
const char* gpu_verdict_name(GpuVerdict v);

/// One failing draw, with what it takes to reproduce it.
struct GpuFuzzFailure {
    std::string op_name;
    uint64_t draw_seed = 0;
    std::string phase;  ///< "steps", "complete", "interpreter", "build", "gpu"
    std::string message;
    std::string steps_json;  ///< every step, the completion's included
};

/// What a run found.
struct GpuFuzzReport {
    int64_t draws = 0;
    std::map<GpuVerdict, int64_t> verdicts;
    /// Per primitive used by a checked case (not rejected): how many passed on the GPU,
    /// compiled only, failed.
    std::map<std::string, std::map<GpuVerdict, int64_t>> per_primitive;
    std::map<std::string, int64_t> reject_reasons;  ///< first line of the message
    std::vector<GpuFuzzFailure> failures;           ///< the first few
    fuzz::StepStats stats;
    double seconds = 0;
    int64_t count(GpuVerdict v) const;
    /// The verdict counts (one summary line first), the per-primitive table, the reasons.
    std::string summary(const GpuFuzzConfig& config) const;
};

/// Runs draws until `config.cases` GPU programs are checked (or 20 draws per case).
GpuFuzzReport run_gpu_fuzz(const GpuFuzzConfig& config);

/// A failure as text: the seeds, operator, phase, message, the step list as JSON and the call
/// that reproduces it (check_gpu_steps_json with `input_seed`, the run's base seed).
std::string describe(const GpuFuzzFailure& f, uint64_t input_seed);

/// Replays `steps_json` (the completion included) on the named suite operator and checks it as
/// the fuzzer does; for regression tests. Returns the verdict; `message` gets the failure's.
GpuVerdict check_gpu_steps_json(const std::string& op_name, const std::string& steps_json,
                                uint64_t input_seed, std::string* message);

}  // namespace tessel::testing
