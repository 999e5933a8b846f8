// pragma auto_unroll_max_step: recorded on the stage's nest; results unchanged.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::Matmul;

TEST(SchedulePragma, AutoUnrollOnMatmul) {
    Matmul mm(11, 9, 7);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.split(c, 1, 4);
    s.pragma_auto_unroll(c, 16);
    EXPECT_EQ(s.stage(c).auto_unroll_max_step, 16);
    std::string ir = expect_matches_reference(s, 7);
    EXPECT_NE(ir.find("pragma_auto_unroll_max_step"), std::string::npos) << ir;
}

TEST(SchedulePragma, AutoUnrollOnComputedAtStage) {
    Tensor A = placeholder({10, 6}, Float(32), "A");
    Tensor B = compute(
        {10, 6}, [&](Var i, Var j) { return A(i, j) + 2.0f; }, "B");
    Tensor C = compute(
        {10, 6}, [&](Var i, Var j) { return B(i, j) * B(i, j); }, "C");
    Schedule s = create_schedule({C});
    int b = s.stage_of(B), c = s.stage_of(C);
    s.compute_at(b, c, 0);
    s.pragma_auto_unroll(b, 8);
    s.pragma_auto_unroll(c, 0);
    expect_matches_reference(s);
}
