// pre_transform of a copy of a placeholder that is not constant: the weight may change between
// calls, so it cannot be laid out once.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorPreTransformOfANonConstantWeight, Throws) {
    Tensor A = placeholder({16, 12}, Float(32), "A");
    Tensor W = placeholder({12, 8}, Float(32), "W");
    IterVar k = reduce_axis({0, 12}, "k");
    Tensor C = compute(
        {16, 8}, [&](Var i, Var j) { return sum(A(i, k) * W(k, j), {k}); }, "C");
    Schedule s = create_schedule({C});
    int pack = s.cache_read(s.stage_of(W), "global", {s.stage_of(C)});
    expect_schedule_error([&] { s.pre_transform(pack); },
                          {"pre_transform", "'W.global'", "'W'", "not constant"});
    EXPECT_EQ(s.steps().size(), 1u);
    EXPECT_FALSE(s.stage(pack).pre_transform);
    // Nor a stage that is neither a copy nor an element-wise transform of one placeholder.
    expect_schedule_error([&] { s.pre_transform(s.stage_of(C)); },
                          {"pre_transform", "'C'",
                           "neither a copy nor an element-wise transform of one placeholder"});
    Tensor V = placeholder({12, 8}, Float(32), "V", /*constant=*/true);
    Tensor both = compute(
        {12, 8}, [&](Var i, Var j) { return W(i, j) + V(i, j); }, "both");
    IterVar r = reduce_axis({0, 12}, "r");
    Tensor D = compute(
        {16, 8}, [&](Var i, Var j) { return sum(A(i, r) * both(r, j), {r}); }, "D");
    Schedule t = create_schedule({D});
    expect_schedule_error([&] { t.pre_transform(t.stage_of(both)); },
                          {"pre_transform", "'both'", "element-wise transform of one placeholder"});
}

TEST(ErrorComputeAtOfAPreTransformedStage, Throws) {
    Tensor A = placeholder({16, 12}, Float(32), "A");
    Tensor W = placeholder({12, 8}, Float(32), "W", /*constant=*/true);
    IterVar k = reduce_axis({0, 12}, "k");
    Tensor C = compute(
        {16, 8}, [&](Var i, Var j) { return sum(A(i, k) * W(k, j), {k}); }, "C");
    Schedule s = create_schedule({C});
    int pack = s.cache_read(s.stage_of(W), "global", {s.stage_of(C)});
    s.pre_transform(pack);
    expect_schedule_error([&] { s.compute_at(pack, s.stage_of(C), 0); },
                          {"compute_at", "'W.global'", "pre-transformed", "outside the kernel"});
    EXPECT_EQ(s.stage(pack).attach, AttachKind::Root);
}
