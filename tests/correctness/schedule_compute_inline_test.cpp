// compute_inline: chains, a stage read several times and by several consumers, inside a conv.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::Matmul;

TEST(ScheduleComputeInline, Chain) {
    Tensor A = placeholder({9, 7}, Float(32), "A");
    Tensor B = compute(
        {9, 7}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Tensor C = compute(
        {9, 7}, [&](Var i, Var j) { return B(i, j) * 2.0f; }, "C");
    Tensor D = compute(
        {9, 7}, [&](Var i, Var j) { return C(i, j) - B(i, j); }, "D");
    Schedule s = create_schedule({D});
    s.compute_inline(s.stage_of(B));
    s.compute_inline(s.stage_of(C));
    std::string ir = expect_matches_reference(s);
    EXPECT_EQ(ir.find("allocate"), std::string::npos) << ir;
}

TEST(ScheduleComputeInline, ChainInlinedOutputFirst) {
    Tensor A = placeholder({9, 7}, Float(32), "A");
    Tensor B = compute(
        {9, 7}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Tensor C = compute(
        {9, 7}, [&](Var i, Var j) { return B(i, j) * 2.0f; }, "C");
    Tensor D = compute(
        {9, 7}, [&](Var i, Var j) { return C(i, j) + 3.0f; }, "D");
    Schedule s = create_schedule({D});
    s.compute_inline(s.stage_of(C));
    s.compute_inline(s.stage_of(B));
    expect_matches_reference(s);
}

TEST(ScheduleComputeInline, ReadSeveralTimesWithShiftedIndices) {
    Tensor A = placeholder({12}, Float(32), "A");
    Tensor B = compute(
        {12}, [&](Var i) { return A(i) * A(i); }, "B");
    Tensor C = compute(
        {10}, [&](Var i) { return B(i) + B(i + 1) + B(i + 2); }, "C");
    Schedule s = create_schedule({C});
    s.compute_inline(s.stage_of(B));
    s.split(s.stage_of(C), 0, 3);
    expect_matches_reference(s);
}

TEST(ScheduleComputeInline, TwoConsumersBothOutputs) {
    Tensor A = placeholder({8, 5}, Float(32), "A");
    Tensor B = compute(
        {8, 5}, [&](Var i, Var j) { return A(i, j) - 0.5f; }, "B");
    Tensor C = compute(
        {8, 5}, [&](Var i, Var j) { return B(i, j) * B(i, j); }, "C");
    Tensor D = compute(
        {5, 8}, [&](Var i, Var j) { return B(j, i) + 1.0f; }, "D");
    Schedule s = create_schedule({C, D});
    s.compute_inline(s.stage_of(B));
    expect_matches_reference(s);
}

TEST(ScheduleComputeInline, IntoReduction) {
    Matmul mm(6, 7, 9);
    Tensor A = mm.A;
    Tensor AT = compute(
        {9, 6}, [&](Var k, Var i) { return A(i, k) * 2.0f; }, "AT");
    IterVar k = reduce_axis({0, 9}, "k");
    Tensor C = compute(
        {6, 7}, [&](Var i, Var j) { return sum(AT(k, i) * mm.B(k, j), {k}); }, "C2");
    Schedule s = create_schedule({C});
    s.compute_inline(s.stage_of(AT));
    s.split(s.stage_of(C), 2, 4);
    expect_matches_reference(s, 9);
}

TEST(ScheduleComputeInline, PaddingIntoConv) {
    using tessel::testing::conv2d_3x3;
    Tensor X = placeholder({1, 2, 6, 7}, Float(32), "X");
    Tensor W = placeholder({3, 2, 3, 3}, Float(32), "W");
    Tensor P = compute(
        {1, 2, 8, 9},
        [&](Var b, Var c, Var y, Var x) {
            Expr inside = y >= 1 && y < 7 && x >= 1 && x < 8;
            return if_then_else(inside, X(b, c, y - 1, x - 1), make_zero(Float(32)));
        },
        "P");
    Tensor C = conv2d_3x3(P, W, 0, "conv");
    Schedule s = create_schedule({C});
    s.compute_inline(s.stage_of(P));
    expect_matches_reference(s, 18);
}
