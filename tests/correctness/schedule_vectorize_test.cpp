// vectorize: inner loops (dividing or guarded), an outer loop with serial loops inside its lanes.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::Matmul;

namespace {

Tensor scale_2d(int n, int m) {
    Tensor X = placeholder({n, m}, Float(32), "X");
    return compute(
        {n, m}, [&](Var i, Var j) { return X(i, j) * 0.5f + 1.0f; }, "Y");
}

}  // namespace

TEST(ScheduleVectorize, InnerLoopDividing) {
    Tensor Y = scale_2d(6, 32);
    Schedule s = create_schedule({Y});
    int y = s.stage_of(Y);
    s.split(y, 1, 8);
    s.vectorize(y, 2);
    std::string ir = expect_matches_reference(s);
    EXPECT_NE(ir.find("vectorized"), std::string::npos) << ir;
}

TEST(ScheduleVectorize, InnerLoopNotDividing) {
    Tensor Y = scale_2d(6, 29);
    Schedule s = create_schedule({Y});
    int y = s.stage_of(Y);
    s.split(y, 1, 8);
    s.vectorize(y, 2);
    expect_matches_reference(s);
}

TEST(ScheduleVectorize, WholeSmallAxis) {
    Tensor Y = scale_2d(5, 7);
    Schedule s = create_schedule({Y});
    s.vectorize(s.stage_of(Y), 1);
    expect_matches_reference(s);
}

TEST(ScheduleVectorize, OuterLoopWithSerialInnerLoop) {
    Tensor Y = scale_2d(4, 9);
    Schedule s = create_schedule({Y});
    s.vectorize(s.stage_of(Y), 0);
    expect_matches_reference(s);
}

TEST(ScheduleVectorize, MatmulInnerSpatialWithReductionInside) {
    Matmul mm(7, 20, 9);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.split(c, 1, 8);            // i jo ji k
    s.reorder(c, {0, 1, 3, 2});  // i jo k ji
    s.vectorize(c, 3);
    expect_matches_reference(s, 9);
}
