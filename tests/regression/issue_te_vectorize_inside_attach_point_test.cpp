// Regression test (issue 22, the write cache of TVM's CPU GEMM walk-through): after
// s[CC].compute_at(s[C], no), s[CC].vectorize(nc) was refused because the check used nc's
// declared extent (the whole row) instead of its extent inside the attach point (the tile);
// unroll had the same problem. The check of an extent compute_at can still change runs on the
// finished schedule (verify_schedule, lowering); a loop too long there still fails, naming the
// primitive, the stage and the loop.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"
#include "error/ExpectScheduleError.h"
#include "tessel/lower/VerifySchedule.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::expect_schedule_error;
using tessel::testing::Matmul;

namespace {

// C = A B (48 x 40, k = 12) with a write cache CC computed per tile of C; CC's reduction split
// by 4 and its loops reordered to (ko, mc, ki, nc). Returns CC's stage index.
int write_cache_gemm(Schedule& s, const Matmul& mm, int tile) {
    int cc = s.cache_write(s.stage_of(mm.C), "global");
    int c = s.stage_of(mm.C);
    s.tile(c, 0, 1, tile, tile);  // mo no mi ni
    s.compute_at(cc, c, 1);
    s.split(cc, 2, 4);            // mc nc ko ki
    s.reorder(cc, {2, 0, 3, 1});  // ko mc ki nc
    return cc;
}

}  // namespace

TEST(Regression, VectorizeAndUnrollUseTheExtentInsideTheAttachPoint) {
    Matmul mm(48, 40, 12);
    // Lane and unroll caps below the declared extents (40, 48), above the tile's (8).
    Schedule s = create_schedule({mm.C}, ScheduleLimits{16, 16});
    int cc = write_cache_gemm(s, mm, 8);
    s.vectorize(cc, 3);  // nc: 40 declared, 8 inside the tile
    s.unroll(cc, 1);     // mc: 48 declared, 8 inside the tile
    verify_schedule(s, Target("llvm"));
    expect_matches_reference(s, 12);
}

TEST(Regression, VectorizeBeforeComputeAtIsCheckedWhenFinished) {
    Matmul mm(48, 40, 12);
    Schedule s = create_schedule({mm.C}, ScheduleLimits{16, 16});
    int cc = s.cache_write(s.stage_of(mm.C), "global");
    s.vectorize(cc, 1);  // TVM's order: the annotation first, the attachment later
    int c = s.stage_of(mm.C);
    s.tile(c, 0, 1, 8, 8);
    s.compute_at(cc, c, 1);
    expect_matches_reference(s, 12);
}

TEST(Regression, VectorizeTooLongInsideTheAttachPointFailsAtLowering) {
    Matmul mm(48, 40, 12);
    Schedule s = create_schedule({mm.C}, ScheduleLimits{16, 16});
    int cc = write_cache_gemm(s, mm, 20);  // a 20 x 20 tile: nc is 20 inside it
    s.vectorize(cc, 3);
    std::vector<Tensor> args{mm.A, mm.B, mm.C};
    expect_schedule_error([&] { lower(s, args); }, {"vectorize", "stage 'C.global'", "extent 20",
                                                    "inside 'C' loop", "lane cap of 16"});
    expect_schedule_error([&] { verify_schedule(s, Target("llvm")); },
                          {"vectorize", "extent 20", "lane cap of 16"});
}

TEST(Regression, UnrollOfAStageLeftAtTheRootFailsAtLowering) {
    Matmul mm(48, 40, 12);
    Schedule s = create_schedule({mm.C}, ScheduleLimits{16, 16});
    int cc = s.cache_write(s.stage_of(mm.C), "global");
    s.unroll(cc, 0);  // 48 at the root: never attached
    std::vector<Tensor> args{mm.A, mm.B, mm.C};
    expect_schedule_error([&] { lower(s, args); }, {"unroll", "stage 'C.global'", "extent 48",
                                                    "at the root", "unroll cap of 16"});
}
