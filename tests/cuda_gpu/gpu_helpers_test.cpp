// The GPU test helpers (tests/gpu/GpuTestUtil.h) on a schedule written in the test: a tiled
// matmul with a local accumulator, checked in the SPMD interpreter and compiled with NVRTC (also
// without a GPU), then run on the GPU (skipped, saying why, without one).
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"
#include "gpu/GpuTestUtil.h"
#include "tessel/runtime/CUDA.h"

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
