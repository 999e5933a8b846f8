// Scheduled reductions: argmax (a multi-output reduce) and a padded conv2d with a full schedule.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;

TEST(ScheduleReductions, ArgmaxSplitReductionAxis) {
    Tensor X = placeholder({11, 19}, Float(32), "X");
    IterVar k = reduce_axis({0, 19}, "k");
    std::vector<Tensor> r = compute_multi(
        {11}, [&](const std::vector<Var>& v) { return argmax(k.var(), X(v[0], k), {k}); },
        "argmax");
    Schedule s = create_schedule(r);
    int st = s.stage_of(r[0]);
    s.split(st, 1, 4);
    s.split(st, 0, 3);
    s.reorder(st, {0, 2, 1, 3});  // io ko ii ki
    expect_matches_reference(s, 19);
}

TEST(ScheduleReductions, ArgmaxWithTies) {
    Tensor X = placeholder({6, 9}, Int(32), "X");
    IterVar k = reduce_axis({0, 9}, "k");
    std::vector<Tensor> r = compute_multi(
        {6}, [&](const std::vector<Var>& v) { return argmax(k.var(), X(v[0], k), {k}); }, "argmax");
    Schedule s = create_schedule(r);
    s.split(s.stage_of(r[0]), 1, 2);
    s.unroll(s.stage_of(r[0]), 2);
    expect_matches_reference(s);  // int32 inputs in [-10, 10]: many ties
}

TEST(ScheduleReductions, Conv2dPaddedTiledAndSplit) {
    using tessel::testing::conv2d_3x3;
    Tensor X = placeholder({2, 3, 9, 10}, Float(32), "X");
    Tensor W = placeholder({5, 3, 3, 3}, Float(32), "W");
    Tensor C = conv2d_3x3(X, W, 1, "conv");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.tile(c, 2, 3, 4, 4);  // b k yo xo yi xi rc ry rx
    s.split(c, 1, 2);       // b ko ki yo xo yi xi rc ry rx
    s.reorder(c, {0, 1, 3, 4, 7, 8, 2, 5, 9, 6});
    s.vectorize(c, 9);
    s.parallel(c, 0);
    expect_matches_reference(s, 27);
}
