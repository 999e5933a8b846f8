// The GPU test helpers (tests/gpu/GpuTestUtil.h) on a schedule written in the test: a tiled
// matmul with a local accumulator, checked in the SPMD interpreter and compiled with NVRTC (also
// without a GPU), then run on the GPU (skipped, saying why, without one).
#include <gtest/gtest.h>

#include <cstdlib>

#include "correctness/ScheduleTestUtil.h"
#include "gpu/GpuTestUtil.h"
#include "tessel/driver/Build.h"
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
// Under compute-sanitizer (racecheck on the GPU host) and where PyTorch's NVRTC was loaded first,
// NVRTC's log comes back without the report (docs/cuda.md); the module then says so in nvrtc_log
// and, with a GPU, gives the driver's attributes of the loaded function instead, in the log and in
// the plan. That case is checked and the test skips, saying why; without a GPU (CI) the report
// must be there.
TEST(GpuHelpers, PtxasReportIsInTheModule) {
    Matmul mm(50, 70, 33);
    Module m = build(local_accumulator_matmul(mm), {mm.A, mm.B, mm.C}, kCudaCompileTarget);
    std::string log = m.get_source("nvrtc_log");
    bool ptxas = log.find("ptxas info    : Used") != std::string::npos;
    if (!ptxas) {
        EXPECT_NE(log.find("NVRTC's log has no ptxas report"), std::string::npos) << log;
        ASSERT_TRUE(cuda_available()) << "without a GPU, NVRTC's log must hold ptxas's report:\n"
                                      << log;
        EXPECT_NE(log.find("[tessel] from the driver (cuFuncGetAttribute, cuda:0)"),
                  std::string::npos)
            << log;
    }
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
    if (!ptxas) {
        GTEST_SKIP() << "NVRTC's log has no ptxas report (a CUDA tool such as compute-sanitizer "
                        "is injected, or another NVRTC was loaded first); the driver's attributes "
                        "stood in for it and were checked";
    }
}

// The driver's attributes of the loaded cubin agree with ptxas's report (registers, static shared
// memory; no local memory where ptxas reports no stack and no spills). Without a GPU, asking for
// them is a RuntimeError that says why.
TEST(GpuHelpers, DriverAttributesAgreeWithPtxas) {
    Matmul mm(50, 70, 33);
    Module m = build(local_accumulator_matmul(mm), {mm.A, mm.B, mm.C}, kCudaCompileTarget);
    CudaPayload payload = decode_cuda_payload(m.payload());
    if (!cuda_available()) {
        EXPECT_THROW(cuda_function_attributes(payload, 0), RuntimeError);
        GTEST_SKIP() << "no GPU: " << cuda_unavailable_reason();
    }
    std::vector<CudaFunctionAttributes> attrs = cuda_function_attributes(payload, 0);
    const CudaLaunch& launch = payload.plans.begin()->second.launches.at(0);
    ASSERT_EQ(attrs.size(), 1u);
    EXPECT_EQ(attrs[0].function, launch.function);
    EXPECT_EQ(attrs[0].registers, launch.resources.registers) << m.get_source("nvrtc_log");
    EXPECT_EQ(attrs[0].static_shared_bytes, launch.resources.static_shared_bytes);
    if (launch.resources.stack_bytes == 0 && launch.resources.spill_store_bytes == 0) {
        EXPECT_EQ(attrs[0].local_bytes, 0);
    }
}
