// The GPU schedule fuzzer (tests/gpu/GpuFuzz.h): random GPU schedules of the operator suite,
// completed into GPU programs, checked in the SPMD interpreter with the race detector, compiled
// with NVRTC and, with a GPU, run there; each against the reference interpreter. Prints the
// verdicts (passed on GPU, compiled only, rejected, failed) and the per-primitive counts;
// TESSEL_GPU_FUZZ_CASES (default 40) and TESSEL_GPU_FUZZ_SEED configure it.
#include <gtest/gtest.h>

#include <cstdio>

#include "gpu/GpuFuzz.h"

using namespace tessel::testing;

TEST(GpuScheduleFuzz, RandomGpuSchedulesMatchTheReference) {
    GpuFuzzConfig config = GpuFuzzConfig::from_env();
    std::printf(
        "gpu schedule fuzz: seed %llu, %lld cases (TESSEL_GPU_FUZZ_SEED, "
        "TESSEL_GPU_FUZZ_CASES)\n",
        static_cast<unsigned long long>(config.seed), static_cast<long long>(config.cases));
    GpuFuzzReport report = run_gpu_fuzz(config);
    std::printf("%s", report.summary(config).c_str());
    for (const GpuFuzzFailure& f : report.failures) {
        ADD_FAILURE() << describe(f, config.seed);
    }
    EXPECT_EQ(report.count(GpuVerdict::Failed), 0);
    int64_t checked = report.count(GpuVerdict::PassedOnGpu) +
                      report.count(GpuVerdict::CompiledOnly) + report.count(GpuVerdict::Budget) +
                      report.count(GpuVerdict::Failed);
    EXPECT_EQ(checked, config.cases) << "too many draws were rejected";
    std::fflush(stdout);
}
