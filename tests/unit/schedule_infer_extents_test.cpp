// Schedule::infer_extents: leaf extents after splits, fuses and compute_at (regions with halos),
// and the bounds a schedule keeps between steps.
#include <gtest/gtest.h>

#include <thread>

#include "tessel/ir/IROperator.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;

namespace {

std::vector<int64_t> extents(const Schedule& s, int stage) {
    std::vector<int64_t> result;
    std::vector<std::vector<Expr>> all = s.infer_extents();  // outlives the loop
    for (const Expr& e : all[stage]) result.push_back(as_const_int(e).value_or(-1));
    return result;
}

// P = X padded by 1 on (1, 4, 16, 16); conv = 3x3 valid convolution of P, 2 output channels.
struct PaddedConv {
    Tensor X, W, P, C;
    PaddedConv() {
        X = placeholder({1, 4, 16, 16}, Float(32), "X");
        W = placeholder({2, 4, 3, 3}, Float(32), "W");
        P = compute(
            {1, 4, 18, 18},
            [&](Var b, Var c, Var y, Var x) {
                Expr inside = y >= 1 && y < 17 && x >= 1 && x < 17;
                return if_then_else(inside, X(b, c, y - 1, x - 1), make_zero(Float(32)));
            },
            "P");
        IterVar rc = reduce_axis({0, 4}, "rc"), ry = reduce_axis({0, 3}, "ry");
        IterVar rx = reduce_axis({0, 3}, "rx");
        C = compute(
            {1, 2, 16, 16},
            [&](Var b, Var k, Var y, Var x) {
                return sum(P(b, rc, y + ry.var(), x + rx.var()) * W(k, rc, ry, rx), {rc, ry, rx});
            },
            "conv");
    }
};

}  // namespace

TEST(ScheduleInferExtents, RootStagesAfterSplitAndFuse) {
    Tensor A = placeholder({37, 23}, Float(32), "A");
    Tensor B = compute(
        {37, 23}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    int b = s.stage_of(B);
    s.split(b, 0, 8);
    s.split_nparts(b, 2, 4);
    EXPECT_EQ(extents(s, b), (std::vector<int64_t>{5, 8, 4, 6}));
    s.fuse(b, {1, 2});
    EXPECT_EQ(extents(s, b), (std::vector<int64_t>{5, 32, 6}));
    EXPECT_TRUE(s.infer_extents()[s.stage_of(A)].empty());
}

TEST(ScheduleInferExtents, ConvTilePlusHalo) {
    PaddedConv g;
    Schedule s = create_schedule({g.C});
    int p = s.stage_of(g.P), c = s.stage_of(g.C);
    s.tile(c, 2, 3, 4, 4);  // b k yo xo yi xi rc ry rx
    s.compute_at(p, c, 3);
    EXPECT_EQ(extents(s, c), (std::vector<int64_t>{1, 2, 4, 4, 4, 4, 4, 3, 3}));
    EXPECT_EQ(extents(s, p), (std::vector<int64_t>{1, 4, 6, 6}));
}

TEST(ScheduleInferExtents, ConvRowsAtDifferentDepths) {
    struct Case {
        int pos;
        std::vector<int64_t> expected;
    };
    for (const Case& k : {Case{1, {1, 4, 18, 18}}, Case{2, {1, 4, 6, 18}}, Case{4, {1, 4, 3, 6}},
                          Case{5, {1, 4, 3, 3}}, Case{6, {1, 1, 3, 3}}}) {
        PaddedConv g;
        Schedule s = create_schedule({g.C});
        int p = s.stage_of(g.P), c = s.stage_of(g.C);
        s.tile(c, 2, 3, 4, 4);
        s.compute_at(p, c, k.pos);
        EXPECT_EQ(extents(s, p), k.expected) << "at position " << k.pos;
    }
}

TEST(ScheduleInferExtents, HaloWithTailTile) {
    Tensor A = placeholder({30, 12}, Float(32), "A");
    Tensor B = compute(
        {30, 12}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "B");
    Tensor C = compute(
        {29, 10}, [&](Var i, Var j) { return B(i, j) + B(i + 1, j + 2); }, "C");
    Schedule s = create_schedule({C});
    int b = s.stage_of(B), c = s.stage_of(C);
    s.split(c, 0, 8);
    s.compute_at(b, c, 0);
    EXPECT_EQ(extents(s, c), (std::vector<int64_t>{4, 8, 10}));
    EXPECT_EQ(extents(s, b), (std::vector<int64_t>{9, 12}));
    s.split(b, 1, 5);
    EXPECT_EQ(extents(s, b), (std::vector<int64_t>{9, 3, 5}));
}

TEST(ScheduleInferExtents, MatmulInsideReluTile) {
    Tensor A = placeholder({37, 19}, Float(32), "A");
    Tensor B = placeholder({19, 23}, Float(32), "B");
    IterVar k = reduce_axis({0, 19}, "k");
    Tensor C = compute(
        {37, 23}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Tensor R = compute(
        {37, 23}, [&](Var i, Var j) { return max(C(i, j), 0.0f); }, "R");
    Schedule s = create_schedule({R});
    int c = s.stage_of(C), r = s.stage_of(R);
    s.tile(r, 0, 1, 8, 8);
    s.compute_at(c, r, 1);
    EXPECT_EQ(extents(s, r), (std::vector<int64_t>{5, 3, 8, 8}));
    EXPECT_EQ(extents(s, c), (std::vector<int64_t>{8, 8, 19}));
}

// A consumer that fuses its loops reads a 1-D producer at the fused index's digits: at a tile of
// the fused loop the producer's region is that tile (4 points), not every row the tile touches.
TEST(ScheduleInferExtents, FusedLoopsDigitsBoundATileExactly) {
    Tensor A = placeholder({196}, Float(32), "A");
    Tensor B = compute(
        {196}, [&](Var p) { return A(p) * 2.0f; }, "B");
    Tensor C = compute(
        {4, 7, 7}, [&](Var n, Var y, Var x) { return B(n * 49 + y * 7 + x) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    int b = s.stage_of(B), c = s.stage_of(C);
    s.fuse(c, {0, 1, 2});
    s.split(c, 0, 4);
    s.compute_at(b, c, 0);
    EXPECT_EQ(extents(s, b), (std::vector<int64_t>{4}));
    EXPECT_EQ(extents(s, c), (std::vector<int64_t>{49, 4}));
}

// A schedule keeps its inferred bounds until a step changes it (Schedule::BoundsMemo): a copy
// answers with the original's, a step on the copy (or a moved attachment) infers them again, and
// the original keeps its own.
TEST(ScheduleInferExtents, KeptBoundsFollowEveryStep) {
    PaddedConv g;
    Schedule s = create_schedule({g.C});
    int p = s.stage_of(g.P), c = s.stage_of(g.C);
    s.tile(c, 2, 3, 4, 4);
    s.compute_at(p, c, 3);
    ASSERT_EQ(extents(s, p), (std::vector<int64_t>{1, 4, 6, 6}));
    Schedule copy = s;
    EXPECT_EQ(extents(copy, p), (std::vector<int64_t>{1, 4, 6, 6}));
    copy.compute_at(p, c, 2);  // one tile row: 4 + 2 rows, every column of the padded input
    EXPECT_EQ(extents(copy, p), (std::vector<int64_t>{1, 4, 6, 18}));
    copy.split(p, 3, 4);
    EXPECT_EQ(extents(copy, p), (std::vector<int64_t>{1, 4, 6, 5, 4}));
    EXPECT_EQ(extents(s, p), (std::vector<int64_t>{1, 4, 6, 6}));
    s = copy;  // assignment takes the other's bounds
    EXPECT_EQ(extents(s, p), (std::vector<int64_t>{1, 4, 6, 5, 4}));
    // A replayed schedule's bounds, first inferred by several threads at once.
    Schedule fresh = replay({g.C}, s.steps());
    std::vector<std::vector<int64_t>> seen(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back([&, t] { seen[t] = extents(fresh, p); });
    for (std::thread& t : threads) t.join();
    for (const auto& e : seen) EXPECT_EQ(e, (std::vector<int64_t>{1, 4, 6, 5, 4}));
}
