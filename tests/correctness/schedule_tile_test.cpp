// tile: two splits and a reorder, with and without dividing factors.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::Matmul;

TEST(ScheduleTile, MatmulDividing) {
    Matmul mm(32, 16, 8);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    EXPECT_EQ(s.tile(c, 0, 1, 8, 4), 0);
    const Stage& st = s.stage(c);
    ASSERT_EQ(st.leaf.size(), 5u);
    EXPECT_EQ(st.iters[st.leaf[0]].name, "i0.outer");
    EXPECT_EQ(st.iters[st.leaf[1]].name, "i1.outer");
    EXPECT_EQ(st.iters[st.leaf[2]].name, "i0.inner");
    EXPECT_EQ(st.iters[st.leaf[3]].name, "i1.inner");
    EXPECT_EQ(s.steps().size(), 3u);
    expect_matches_reference(s, 8);
}

TEST(ScheduleTile, MatmulNotDividing) {
    Matmul mm(37, 23, 19);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.tile(c, 0, 1, 8, 5);
    s.split(c, 4, 4);
    s.reorder(c, {0, 1, 4, 2, 3, 5});  // io jo ko ii ji ki
    expect_matches_reference(s, 19);
}

TEST(ScheduleTile, InnerTwoAxesOf3d) {
    Tensor X = placeholder({3, 13, 11}, Float(32), "X");
    Tensor Y = compute(
        {3, 13, 11}, [&](Var b, Var i, Var j) { return X(b, i, j) - 1.0f; }, "Y");
    Schedule s = create_schedule({Y});
    s.tile(s.stage_of(Y), 1, 2, 4, 3);
    expect_matches_reference(s);
}
