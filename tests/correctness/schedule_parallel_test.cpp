// parallel: outer loops, fused loops, a producer computed inside a parallel loop.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::Matmul;

TEST(ScheduleParallel, MatmulOuterLoop) {
    Matmul mm(13, 7, 9);
    Schedule s = create_schedule({mm.C});
    s.parallel(s.stage_of(mm.C), 0);
    std::string ir = expect_matches_reference(s, 9);
    EXPECT_NE(ir.find("parallel"), std::string::npos) << ir;
}

TEST(ScheduleParallel, FusedTileLoops) {
    Matmul mm(37, 23, 5);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.tile(c, 0, 1, 8, 8);
    s.fuse(c, {0, 1});
    s.parallel(c, 0);
    expect_matches_reference(s, 5);
}

TEST(ScheduleParallel, ProducerComputedInsideParallelLoop) {
    Tensor A = placeholder({19, 8}, Float(32), "A");
    Tensor B = compute(
        {19, 8}, [&](Var i, Var j) { return A(i, j) * A(i, j); }, "B");
    Tensor C = compute(
        {19, 8}, [&](Var i, Var j) { return B(i, j) + B(i, 7 - j); }, "C");
    Schedule s = create_schedule({C});
    int b = s.stage_of(B), c = s.stage_of(C);
    s.split(c, 0, 4);
    s.parallel(c, 0);
    s.compute_at(b, c, 0);
    expect_matches_reference(s);
}

TEST(ScheduleParallel, InnerSpatialLoopOfReduction) {
    Matmul mm(5, 12, 7);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.reorder(c, {0, 2, 1});  // i k j: each iteration of j touches its own C element
    s.parallel(c, 2);
    expect_matches_reference(s, 7);
}
