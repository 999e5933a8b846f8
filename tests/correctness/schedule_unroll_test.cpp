// unroll: spatial and reduction loops, with and without dividing factors.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::Matmul;

TEST(ScheduleUnroll, InnerSpatialLoop) {
    Tensor X = placeholder({10, 13}, Float(32), "X");
    Tensor Y = compute(
        {10, 13}, [&](Var i, Var j) { return X(i, j) + X(i, 12 - j); }, "Y");
    Schedule s = create_schedule({Y});
    int y = s.stage_of(Y);
    s.split(y, 1, 4);
    s.unroll(y, 2);
    std::string ir = expect_matches_reference(s);
    EXPECT_NE(ir.find("unrolled"), std::string::npos) << ir;
}

TEST(ScheduleUnroll, ReductionLoopNotDividing) {
    Matmul mm(6, 5, 13);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.split(c, 2, 4);
    s.unroll(c, 3);
    expect_matches_reference(s, 13);
}

TEST(ScheduleUnroll, SeveralLoops) {
    Matmul mm(6, 5, 4);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.unroll(c, 1);
    s.unroll(c, 2);
    expect_matches_reference(s, 4);
}
