// split: by factor and by number of parts, each tail strategy, factors that do not divide.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::Matmul;

namespace {

// B = A * 2 (an intermediate stage), C = B + 1 (the output).
struct Chain {
    Tensor A, B, C;
    Chain(int n, int m) {
        A = placeholder({n, m}, Float(32), "A");
        B = compute(
            {n, m}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "B");
        C = compute(
            {n, m}, [&](Var i, Var j) { return B(i, j) + 1.0f; }, "C");
    }
};

}  // namespace

TEST(ScheduleSplit, MatmulSplitReorder) {
    Matmul mm(37, 23, 19);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.split(c, 0, 8);
    s.split(c, 2, 4);
    s.reorder(c, {0, 2, 4, 1, 3});
    expect_matches_reference(s, 19);
}

TEST(ScheduleSplit, ByFactorNotDividing) {
    Chain g(37, 23);
    Schedule s = create_schedule({g.C});
    int c = s.stage_of(g.C);
    s.split(c, 0, 8);
    s.split(c, 2, 5);
    std::string ir = expect_matches_reference(s);
    EXPECT_NE(ir.find("likely"), std::string::npos) << ir;
}

TEST(ScheduleSplit, ByFactorDividingHasNoGuard) {
    Chain g(32, 24);
    Schedule s = create_schedule({g.C});
    s.split(s.stage_of(g.C), 0, 8);
    std::string ir = expect_matches_reference(s);
    EXPECT_EQ(ir.find("likely"), std::string::npos) << ir;
}

TEST(ScheduleSplit, FactorLargerThanExtent) {
    Chain g(5, 3);
    Schedule s = create_schedule({g.C});
    s.split(s.stage_of(g.C), 1, 16);
    expect_matches_reference(s);
}

TEST(ScheduleSplit, ByNparts) {
    Chain g(37, 23);
    Schedule s = create_schedule({g.C});
    int c = s.stage_of(g.C);
    s.split_nparts(c, 0, 5);
    s.split_nparts(c, 2, 4);
    EXPECT_EQ(s.stage(c).iters[s.stage(c).leaf[0]].const_extent(), 5);
    EXPECT_EQ(s.stage(c).iters[s.stage(c).leaf[1]].const_extent(), 8);
    expect_matches_reference(s);
}

TEST(ScheduleSplit, NestedSplits) {
    Chain g(100, 3);
    Schedule s = create_schedule({g.C});
    int c = s.stage_of(g.C);
    s.split(c, 0, 16);
    s.split(c, 1, 3);
    s.split(c, 0, 3);
    expect_matches_reference(s);
}

TEST(ScheduleSplit, ReductionAxisNotDividing) {
    Matmul mm(9, 7, 23);
    Schedule s = create_schedule({mm.C});
    s.split(s.stage_of(mm.C), 2, 5);
    expect_matches_reference(s, 23);
}

TEST(ScheduleSplit, ReductionOverOuterAxis) {
    // R(j) = sum over i of A(i, j): the reduced axis is not the innermost one of A.
    Tensor A = placeholder({29, 13}, Float(32), "A");
    IterVar r = reduce_axis({0, 29}, "r");
    Tensor R = compute(
        {13}, [&](Var j) { return sum(A(r, j), {r}); }, "R");
    Schedule s = create_schedule({R});
    int st = s.stage_of(R);
    s.split(st, 1, 4);
    s.split(st, 0, 3);
    s.reorder(st, {2, 0, 3, 1});
    expect_matches_reference(s, 29);
}

TEST(ScheduleSplit, GuardTailOnIntermediate) {
    Chain g(37, 23);
    Schedule s = create_schedule({g.C});
    s.split(s.stage_of(g.B), 1, 4, TailStrategy::Guard);
    expect_matches_reference(s);
}

TEST(ScheduleSplit, ShiftInwardsTailOnIntermediate) {
    Chain g(37, 23);
    Schedule s = create_schedule({g.C});
    s.split(s.stage_of(g.B), 1, 4, TailStrategy::ShiftInwards);
    std::string ir = expect_matches_reference(s);
    EXPECT_EQ(ir.find("likely"), std::string::npos) << ir;
}

TEST(ScheduleSplit, ShiftInwardsTailOnOutput) {
    Chain g(37, 23);
    Schedule s = create_schedule({g.C});
    s.split(s.stage_of(g.C), 0, 8, TailStrategy::ShiftInwards);
    expect_matches_reference(s);
}

TEST(ScheduleSplit, RoundUpTailOnIntermediate) {
    Chain g(37, 23);
    Schedule s = create_schedule({g.C});
    s.split(s.stage_of(g.B), 1, 4, TailStrategy::RoundUp);
    std::string ir = expect_matches_reference(s);
    EXPECT_EQ(ir.find("likely"), std::string::npos) << ir;
}

TEST(ScheduleSplit, TailStrategiesInsideComputeAt) {
    for (TailStrategy tail :
         {TailStrategy::Guard, TailStrategy::ShiftInwards, TailStrategy::RoundUp}) {
        Chain g(37, 23);
        Schedule s = create_schedule({g.C});
        int b = s.stage_of(g.B), c = s.stage_of(g.C);
        s.split(c, 1, 8);
        s.compute_at(b, c, 1);
        s.split(b, 1, 3, tail);
        SCOPED_TRACE(tail_strategy_name(tail));
        expect_matches_reference(s);
    }
}
