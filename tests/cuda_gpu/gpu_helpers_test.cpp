// The GPU test helpers (tests/gpu/GpuTestUtil.h) on a schedule written in the test: a tiled
// matmul with a local accumulator, checked in the SPMD interpreter and compiled with NVRTC (also
// without a GPU), then run on the GPU (skipped, saying why, without one).
#include <gtest/gtest.h>

#include <cstdlib>

#include "correctness/ScheduleTestUtil.h"
#include "gpu/GpuTestUtil.h"
#include "tessel/codegen/Build.h"
#include "tessel/runtime/CUDA.h"
#include "tessel/runtime/CudaLaunchPlan.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

Schedule local_accumulator_matmul(const Matmul& mm) {
    Schedule s = create_schedule({mm.C});
    int cl = s.cache_write(s.stage_of(mm.C), "local");
    int c = s.stage_of(mm.C);
    s.tile(c, 0, 1, 4, 32);  // io jo ii ji (50 = 12*4 + 2, 70 = 2*32 + 6: partial tiles)
    s.bind(c, 0, IterAnnotation::BlockY);
    s.bind(c, 1, IterAnnotation::BlockX);
    s.bind(c, 2, IterAnnotation::ThreadY);
    s.bind(c, 3, IterAnnotation::ThreadX);
    s.compute_at(cl, c, 3);
    return s;
}

}  // namespace

TEST(GpuHelpers, ScheduleCompilesAndMatchesInTheInterpreter) {
    Matmul mm(50, 70, 33);
    std::optional<Module> m =
        expect_gpu_schedule_ok(local_accumulator_matmul(mm), {mm.A, mm.B, mm.C}, 33);
    ASSERT_TRUE(m.has_value());
    EXPECT_NE(m->get_source("ptx").find(".entry"), std::string::npos);
}

TEST(GpuHelpers, ScheduleRunsOnTheGpu) {
    Matmul mm(50, 70, 33);
    EXPECT_GPU_RUN_MATCHES_REFERENCE(local_accumulator_matmul(mm),
                                     std::vector<Tensor>({mm.A, mm.B, mm.C}), 33);
}

// ptxas's report comes back with the module, GPU or not: NVRTC's log holds it, and each launch of
// the plan carries the registers, spills, stack and static shared memory of its function.
// Under compute-sanitizer's racecheck (which injects itself through CUDA_INJECTION64_PATH) the
// same NVRTC's log came back without the report on the GPU host; the module then says so in
// nvrtc_log (docs/cuda.md), which is checked instead.
TEST(GpuHelpers, PtxasReportIsInTheModule) {
    Matmul mm(50, 70, 33);
    Module m = build(local_accumulator_matmul(mm), {mm.A, mm.B, mm.C}, kCudaCompileTarget);
    std::string log = m.get_source("nvrtc_log");
    if (std::getenv("CUDA_INJECTION64_PATH") && log.find("ptxas info") == std::string::npos) {
        EXPECT_NE(log.find("NVRTC's log has no ptxas report"), std::string::npos) << log;
        GTEST_SKIP() << "a CUDA tool is injected (CUDA_INJECTION64_PATH) and NVRTC's log has no "
                        "ptxas report";
    }
    EXPECT_NE(log.find("ptxas info    : Used"), std::string::npos) << "NVRTC's log:\n" << log;
    CudaPayload payload = decode_cuda_payload(m.payload());
    ASSERT_EQ(payload.plans.size(), 1u);
    const CudaLaunchPlan& plan = payload.plans.begin()->second;
    ASSERT_EQ(plan.launches.size(), 1u);
    const CudaResources& r = plan.launches[0].resources;
    EXPECT_GT(r.registers, 0) << log;
    EXPECT_LE(r.registers, 255) << log;
    EXPECT_EQ(r.spill_store_bytes, 0) << log;
    EXPECT_EQ(r.spill_load_bytes, 0) << log;
    EXPECT_GE(r.stack_bytes, 0) << log;
    EXPECT_EQ(r.static_shared_bytes, 0) << log;  // no shared stage
}
