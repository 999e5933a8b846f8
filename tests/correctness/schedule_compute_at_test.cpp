// compute_at: halos, every depth, two producers at one loop, chains, reductions as producers or
// consumers, a padded conv2d tile.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::Matmul;

namespace {

// B = 2A on 30x12; C(i, j) = B(i, j) + B(i + 1, j + 2) on 29x10.
struct Halo {
    Tensor A, B, C;
    Halo() {
        A = placeholder({30, 12}, Float(32), "A");
        B = compute(
            {30, 12}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "B");
        C = compute(
            {29, 10}, [&](Var i, Var j) { return B(i, j) + B(i + 1, j + 2); }, "C");
    }
};

}  // namespace

TEST(ScheduleComputeAt, WithHalo) {
    Halo h;
    Schedule s = create_schedule({h.C});
    int c = s.stage_of(h.C), b = s.stage_of(h.B);
    s.split(c, 0, 8);
    s.compute_at(b, c, 0);
    expect_matches_reference(s);
}

TEST(ScheduleComputeAt, EveryDepthOfATiledConsumer) {
    for (int depth = 0; depth < 4; ++depth) {
        Halo h;
        Schedule s = create_schedule({h.C});
        int c = s.stage_of(h.C), b = s.stage_of(h.B);
        s.tile(c, 0, 1, 8, 3);  // io jo ii ji, neither factor divides
        s.compute_at(b, c, depth);
        SCOPED_TRACE("depth " + std::to_string(depth));
        expect_matches_reference(s);
    }
}

TEST(ScheduleComputeAt, ProducerSplitInside) {
    Halo h;
    Schedule s = create_schedule({h.C});
    int c = s.stage_of(h.C), b = s.stage_of(h.B);
    s.split(c, 0, 8);
    s.compute_at(b, c, 0);
    s.split(b, 1, 5);
    s.reorder(b, {2, 0, 1});
    expect_matches_reference(s);
}

TEST(ScheduleComputeAt, TwoProducersAtOneLoop) {
    Tensor A = placeholder({21, 9}, Float(32), "A");
    Tensor P = compute(
        {21, 9}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "P");
    Tensor Q = compute(
        {21, 9}, [&](Var i, Var j) { return A(i, j) * 3.0f; }, "Q");
    Tensor C = compute(
        {20, 9}, [&](Var i, Var j) { return P(i + 1, j) - Q(i, 8 - j); }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.split(c, 0, 6);
    s.compute_at(s.stage_of(P), c, 1);
    s.compute_at(s.stage_of(Q), c, 1);
    expect_matches_reference(s);
}

TEST(ScheduleComputeAt, ChainEachAtTheNext) {
    Tensor A = placeholder({26}, Float(32), "A");
    Tensor B = compute(
        {25}, [&](Var i) { return A(i) + A(i + 1); }, "B");
    Tensor C = compute(
        {24}, [&](Var i) { return B(i) * B(i + 1); }, "C");
    Tensor D = compute(
        {23}, [&](Var i) { return C(i) - C(i + 1); }, "D");
    Schedule s = create_schedule({D});
    int b = s.stage_of(B), c = s.stage_of(C), d = s.stage_of(D);
    s.split(d, 0, 5);
    s.compute_at(c, d, 0);
    s.split(c, 0, 2);
    s.compute_at(b, c, 0);
    expect_matches_reference(s);
}

TEST(ScheduleComputeAt, ChainAttachedInReverseOrder) {
    Tensor A = placeholder({26}, Float(32), "A");
    Tensor B = compute(
        {25}, [&](Var i) { return A(i) + A(i + 1); }, "B");
    Tensor C = compute(
        {24}, [&](Var i) { return B(i) * B(i + 1); }, "C");
    Tensor D = compute(
        {23}, [&](Var i) { return C(i) - C(i + 1); }, "D");
    Schedule s = create_schedule({D});
    int b = s.stage_of(B), c = s.stage_of(C), d = s.stage_of(D);
    s.split(c, 0, 4);
    s.compute_at(b, c, 0);
    s.split(d, 0, 7);
    s.compute_at(c, d, 0);
    expect_matches_reference(s);
}

TEST(ScheduleComputeAt, MatmulInsideReluTile) {
    Matmul mm(37, 23, 19);
    Tensor R = compute(
        {37, 23}, [&](Var i, Var j) { return max(mm.C(i, j), 0.0f); }, "R");
    Schedule s = create_schedule({R});
    int c = s.stage_of(mm.C), r = s.stage_of(R);
    s.tile(r, 0, 1, 8, 8);
    s.compute_at(c, r, 1);
    s.split(c, 2, 4);
    expect_matches_reference(s, 19);
}

TEST(ScheduleComputeAt, ProducerAtReductionLoop) {
    Tensor A = placeholder({7, 13}, Float(32), "A");
    Tensor B = compute(
        {7, 13}, [&](Var i, Var j) { return A(i, j) * A(i, j); }, "B");
    IterVar k = reduce_axis({0, 13}, "k");
    Tensor S = compute(
        {7}, [&](Var i) { return sum(B(i, k), {k}); }, "S");
    Schedule sch = create_schedule({S});
    int b = sch.stage_of(B), st = sch.stage_of(S);
    sch.split(st, 1, 4);
    sch.compute_at(b, st, 1);
    expect_matches_reference(sch, 13);
}

TEST(ScheduleComputeAt, PaddedInputInsideConvTile) {
    using tessel::testing::conv2d_3x3;
    Tensor X = placeholder({1, 3, 10, 9}, Float(32), "X");
    Tensor W = placeholder({4, 3, 3, 3}, Float(32), "W");
    Tensor P = compute(
        {1, 3, 12, 11},
        [&](Var b, Var c, Var y, Var x) {
            Expr inside = y >= 1 && y < 11 && x >= 1 && x < 10;
            return if_then_else(inside, X(b, c, y - 1, x - 1), make_zero(Float(32)));
        },
        "P");
    Tensor C = conv2d_3x3(P, W, 0, "conv");
    Schedule s = create_schedule({C});
    int p = s.stage_of(P), c = s.stage_of(C);
    s.tile(c, 2, 3, 4, 4);  // b k yo xo yi xi rc ry rx
    s.compute_at(p, c, 3);
    expect_matches_reference(s, 27);
}

TEST(ScheduleComputeAt, ProducerTileLargerThanTheRegionShrinksToIt) {
    // B is split by 16 but computed for 4 columns of C at a time: its inner loop covers the 6
    // columns needed (no loop of 16 with a guard), its outer loop has one iteration.
    Halo h;
    Schedule s = create_schedule({h.C});
    int c = s.stage_of(h.C), b = s.stage_of(h.B);
    s.split(c, 1, 4);  // i jo ji
    s.compute_at(b, c, 1);
    s.split(b, 1, 16);  // i jo ji
    expect_matches_reference(s);
    std::vector<std::vector<Expr>> extents = s.infer_extents();
    EXPECT_EQ(as_const_int(extents[b][1]).value_or(-1), 1);
    EXPECT_EQ(as_const_int(extents[b][2]).value_or(-1), 6);  // 4 columns and the halo of 2
    std::string lowered = to_string(lower(s, {h.A, h.C}));
    EXPECT_EQ(lowered.find("if likely"), std::string::npos) << lowered;
}
