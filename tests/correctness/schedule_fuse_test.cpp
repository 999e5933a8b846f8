// fuse: two and three loops, after a split, reduction loops, then split the fused loop.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::Matmul;

namespace {

Tensor add_one_3d(int a, int b, int c) {
    Tensor X = placeholder({a, b, c}, Float(32), "X");
    return compute(
        {a, b, c}, [&](Var i, Var j, Var k) { return X(i, j, k) + 1.0f; }, "Y");
}

}  // namespace

TEST(ScheduleFuse, TwoLoops) {
    Tensor Y = add_one_3d(5, 7, 3);
    Schedule s = create_schedule({Y});
    EXPECT_EQ(s.fuse(s.stage_of(Y), {0, 1}), 0);
    EXPECT_EQ(s.stage(s.stage_of(Y)).leaf.size(), 2u);
    expect_matches_reference(s);
}

TEST(ScheduleFuse, ThreeLoops) {
    Tensor Y = add_one_3d(5, 7, 3);
    Schedule s = create_schedule({Y});
    int y = s.stage_of(Y);
    s.fuse(y, {0, 1, 2});
    EXPECT_EQ(tessel::testing::inferred_extents(s, y), std::vector<int64_t>{105});
    expect_matches_reference(s);
}

TEST(ScheduleFuse, InnerTwoOfThree) {
    Tensor Y = add_one_3d(5, 7, 3);
    Schedule s = create_schedule({Y});
    s.fuse(s.stage_of(Y), {1, 2});
    expect_matches_reference(s);
}

TEST(ScheduleFuse, AfterSplitNotDividing) {
    Tensor Y = add_one_3d(5, 13, 3);
    Schedule s = create_schedule({Y});
    int y = s.stage_of(Y);
    s.split(y, 1, 4);   // i, j.outer, j.inner, k
    s.fuse(y, {2, 3});  // i, j.outer, j.inner.k.fused
    s.fuse(y, {0, 1});  // i.j.outer.fused, ...
    expect_matches_reference(s);
}

TEST(ScheduleFuse, ThenSplitFusedNotDividing) {
    Tensor Y = add_one_3d(5, 7, 3);
    Schedule s = create_schedule({Y});
    int y = s.stage_of(Y);
    s.fuse(y, {0, 1, 2});
    s.split(y, 0, 16);
    expect_matches_reference(s);
}

TEST(ScheduleFuse, ReductionLoops) {
    Tensor X = placeholder({6, 5, 7}, Float(32), "X");
    IterVar r1 = reduce_axis({0, 5}, "r1"), r2 = reduce_axis({0, 7}, "r2");
    Tensor S = compute(
        {6},
        [&](Var i) {
            return sum(X(i, r1, r2), {r1, r2});
        },
        "S");
    Schedule s = create_schedule({S});
    int st = s.stage_of(S);
    s.fuse(st, {1, 2});
    s.split(st, 1, 8);
    expect_matches_reference(s, 35);
}

TEST(ScheduleFuse, MatmulSpatialLoops) {
    Matmul mm(9, 11, 6);
    Schedule s = create_schedule({mm.C});
    s.fuse(s.stage_of(mm.C), {0, 1});
    expect_matches_reference(s, 6);
}
