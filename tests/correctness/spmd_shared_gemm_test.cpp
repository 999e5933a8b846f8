// SPMD: a shared-memory tiled GEMM (copy stages in shared memory, barriers inserted by
// insert_barriers) matches the reference and runs clean under the race detector.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"
#include "correctness/SharedGemm.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::SharedGemm;

TEST(SpmdSharedGemm, MatchesReferenceRaceFree) {
    SharedGemm g(32, 24, 24, 8);
    std::string ir = expect_matches_reference(g.s, 24);
    std::string lowered = to_string(lower(g.s, {g.A, g.B, g.C}));
    EXPECT_NE(lowered.find("allocate As: float32[64] (shared)"), std::string::npos) << lowered;
    // One barrier before the copies of each k step (the previous step's reads), one before the
    // multiply-accumulate (the copies' writes).
    size_t barriers = 0;
    for (size_t p = lowered.find("thread_barrier"); p != std::string::npos;
         p = lowered.find("thread_barrier", p + 1))
        ++barriers;
    EXPECT_EQ(barriers, 2u) << lowered;
}

TEST(SpmdSharedGemm, NonDividingTiles) {
    SharedGemm g(20, 12, 12, 8);  // partial tiles on every axis: guarded copies and stores
    expect_matches_reference(g.s, 12);
}
