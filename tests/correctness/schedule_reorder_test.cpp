// reorder: permutations of spatial loops, reductions moved outward, after splits.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::Matmul;

TEST(ScheduleReorder, Transpose3d) {
    Tensor X = placeholder({4, 5, 6}, Float(32), "X");
    Tensor Y = compute(
        {4, 5, 6}, [&](Var i, Var j, Var k) { return X(i, j, k) * 3.0f; }, "Y");
    Schedule s = create_schedule({Y});
    s.reorder(s.stage_of(Y), {2, 0, 1});
    expect_matches_reference(s);
}

TEST(ScheduleReorder, IdentityOrder) {
    Matmul mm(5, 6, 7);
    Schedule s = create_schedule({mm.C});
    s.reorder(s.stage_of(mm.C), {0, 1, 2});
    expect_matches_reference(s, 7);
}

TEST(ScheduleReorder, ReductionOutermost) {
    Matmul mm(9, 10, 11);
    Schedule s = create_schedule({mm.C});
    s.reorder(s.stage_of(mm.C), {2, 0, 1});  // k, i, j
    expect_matches_reference(s, 11);
}

TEST(ScheduleReorder, ReductionBetweenSplitLoops) {
    Matmul mm(37, 23, 19);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.split(c, 0, 8);               // io ii j k
    s.split(c, 3, 4);               // io ii j ko ki
    s.reorder(c, {0, 3, 2, 1, 4});  // io ko j ii ki
    expect_matches_reference(s, 19);
}

TEST(ScheduleReorder, ReductionOverOuterAxis) {
    Tensor A = placeholder({17, 6, 5}, Float(32), "A");
    IterVar r = reduce_axis({0, 17}, "r");
    Tensor R = compute(
        {6, 5}, [&](Var j, Var k) { return sum(A(r, j, k), {r}); }, "R");
    Schedule s = create_schedule({R});
    s.reorder(s.stage_of(R), {2, 1, 0});  // r, k, j
    expect_matches_reference(s, 17);
}
