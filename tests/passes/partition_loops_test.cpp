// PartitionLoops: guard-free main parts for split loops, heads and tails keeping their guards.
#include <gtest/gtest.h>

#include "PassTestUtil.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/Equality.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/PartitionLoops.h"

namespace tessel {
namespace {

Expr load(const Var& buf, Expr index) {
    return Load::make(Float(32), buf, std::move(index));
}

Stmt sfor(const Var& v, Expr min, Expr extent, Stmt body) {
    return For::make(v, std::move(min), std::move(extent), ForKind::Serial, std::move(body));
}

Expr likely(Expr c) {
    return Call::make(Intrinsic::likely, {std::move(c)});
}

int count_nodes(const Stmt& s, IRNodeType t) {
    int n = 0;
    post_order_visit(s, [&](const IRNode* node) { n += node->node_type == t; });
    return n;
}

TEST(PartitionLoops, SplitBy32Of1000HasAGuardFreeMainBody) {
    Var A("A", Handle()), B("B", Handle()), io("io"), ii("ii");
    Expr i = io * 32 + ii;
    Stmt in = sfor(
        io, 0, 32,
        sfor(ii, 0, 32, IfThenElse::make(likely(i < 1000), Store::make(B, load(A, i) * 2.0f, i))));
    Stmt out = partition_loops(in);
    EXPECT_EQ(to_string(out),
              "for io in range(0, 31):\n"
              "    for ii in range(0, 32):\n"
              "        B[io * 32 + ii] = A[io * 32 + ii] * 2.0f\n"
              "for io in range(31, 32):\n"
              "    for ii in range(0, 8):\n"
              "        B[io * 32 + ii] = A[io * 32 + ii] * 2.0f\n");
    EXPECT_EQ(count_nodes(out, IRNodeType::IfThenElse), 0);
    test::expect_same_results(in, out, {{A, Float(32), 1000}, {B, Float(32), 1000}});
}

/// C[i, j] += A[i, k] * B[k, j] for NxN (k of 4), i and j split by 32 with one guard each, as
/// the split primitive leaves them.
Stmt split_matmul(int N, const Var& A, const Var& B, const Var& C) {
    const int K = 4;
    Var io("io"), ii("ii"), jo("jo"), ji("ji"), k("k");
    Expr i = io * 32 + ii, j = jo * 32 + ji;
    int outer = (N + 31) / 32;
    Stmt update =
        Store::make(C, load(C, i * N + j) + load(A, i * K + k) * load(B, k * N + j), i * N + j);
    return sfor(
        io, 0, outer,
        sfor(jo, 0, outer,
             sfor(ii, 0, 32,
                  IfThenElse::make(
                      likely(i < N),
                      sfor(ji, 0, 32, IfThenElse::make(likely(j < N), sfor(k, 0, K, update)))))));
}

TEST(PartitionLoops, MatmulSplitBothAxes) {
    Var A("A", Handle()), B("B", Handle()), C("C", Handle());
    Stmt out = partition_loops(split_matmul(1000, A, B, C));
    // The first part of every loop is the main one: the nest io < 31, jo < 31 has no guard.
    const auto* seq = out.as<Seq>();
    ASSERT_TRUE(seq) << out;
    const auto* main_io = seq->stmts[0].as<For>();
    ASSERT_TRUE(main_io && is_const_int(main_io->extent, 31)) << out;
    const auto* jo_seq = main_io->body.as<Seq>();
    ASSERT_TRUE(jo_seq) << out;
    const auto* main_jo = jo_seq->stmts[0].as<For>();
    ASSERT_TRUE(main_jo && is_const_int(main_jo->extent, 31)) << out;
    EXPECT_EQ(count_nodes(out, IRNodeType::IfThenElse), 0) << out;
    // Same results on a smaller instance (100 = 3 * 32 + 4).
    Stmt small = split_matmul(100, A, B, C);
    Stmt small_out = partition_loops(small);
    EXPECT_EQ(count_nodes(small_out, IRNodeType::IfThenElse), 0) << small_out;
    test::expect_same_results(small, small_out,
                              {{A, Float(32), 400}, {B, Float(32), 400}, {C, Float(32), 10000}});
}

TEST(PartitionLoops, SimplifiedSplitIndicesHaveNoDivisions) {
    // A reshape of a 1000-vector into rows of 32 read through the split loop: after partitioning
    // and simplify, the innermost indices of the main part are plain affine expressions.
    Var A("A", Handle()), B("B", Handle()), io("io"), ii("ii");
    Expr i = io * 32 + ii;
    Expr reshaped = floordiv(i, 32) * 32 + floormod(i, 32);
    Stmt in = sfor(
        io, 0, 32,
        sfor(ii, 0, 32, IfThenElse::make(likely(i < 1000), Store::make(B, load(A, reshaped), i))));
    Stmt out = simplify(partition_loops(in));
    EXPECT_EQ(count_nodes(out, IRNodeType::FloorDiv), 0) << out;
    EXPECT_EQ(count_nodes(out, IRNodeType::FloorMod), 0) << out;
    EXPECT_EQ(count_nodes(out, IRNodeType::IfThenElse), 0) << out;
    test::expect_same_results(in, out, {{A, Float(32), 1000}, {B, Float(32), 1000}});
}

TEST(PartitionLoops, HeadPartWhereTheGuardIsFalse) {
    Var A("A", Handle()), v("v");
    Stmt in = sfor(v, 0, 20, IfThenElse::make(v >= 3, Store::make(A, 1.0f, v)));
    Stmt out = partition_loops(in);
    EXPECT_TRUE(structural_equal(out, sfor(v, 3, 17, Store::make(A, 1.0f, v)))) << out;
}

TEST(PartitionLoops, HeadMainAndTailWithElseBranches) {
    Var A("A", Handle()), v("v");
    Stmt in = sfor(v, 0, 20,
                   IfThenElse::make(likely(v >= 2 && v < 18), Store::make(A, 1.0f, v),
                                    Store::make(A, 2.0f, v)));
    Stmt out = partition_loops(in);
    Stmt expected =
        Seq::make({sfor(v, 0, 2, Store::make(A, 2.0f, v)), sfor(v, 2, 16, Store::make(A, 1.0f, v)),
                   sfor(v, 18, 2, Store::make(A, 2.0f, v))});
    EXPECT_TRUE(structural_equal(out, expected)) << out;
    test::expect_same_results(in, out, {{A, Float(32), 20}});
}

TEST(PartitionLoops, PaddingReadThroughIfThenElse) {
    Var A("A", Handle()), B("B", Handle()), v("v");
    Stmt in = sfor(v, 0, 10, Store::make(B, if_then_else(likely(v >= 1), load(A, v - 1), 0.0f), v));
    Stmt out = partition_loops(in);
    Stmt expected = Seq::make(
        {sfor(v, 0, 1, Store::make(B, 0.0f, v)), sfor(v, 1, 9, Store::make(B, load(A, v - 1), v))});
    EXPECT_TRUE(structural_equal(out, expected)) << out;
    test::expect_same_results(in, out, {{A, Float(32), 9}, {B, Float(32), 10}});
}

TEST(PartitionLoops, UnprovableOrSymbolicGuardsStay) {
    Var A("A", Handle()), v("v"), n("n");
    Stmt data_dependent =
        sfor(v, 0, 8, IfThenElse::make(load(A, v) > 0.0f, Store::make(A, 0.0f, v)));
    EXPECT_TRUE(partition_loops(data_dependent).same_as(data_dependent));
    Stmt symbolic = sfor(v, 0, n, IfThenElse::make(likely(v < 100), Store::make(A, 0.0f, v)));
    EXPECT_TRUE(structural_equal(partition_loops(symbolic), symbolic));
}

TEST(PartitionLoops, VectorizedLoopsAreNotSplit) {
    Var A("A", Handle()), io("io"), v("v");
    Expr i = io * 8 + v;
    Stmt in = sfor(io, 0, 3,
                   For::make(v, 0, 8, ForKind::Vectorized,
                             IfThenElse::make(likely(i < 20), Store::make(A, 1.0f, i))));
    Stmt out = partition_loops(in);
    // io splits into [0, 2) guard-free and io = 2 where the vectorized loop keeps its guard.
    const auto* seq = out.as<Seq>();
    ASSERT_TRUE(seq && seq->stmts.size() == 2) << out;
    EXPECT_EQ(count_nodes(seq->stmts[0], IRNodeType::IfThenElse), 0) << out;
    const auto* tail = seq->stmts[1].as<For>();
    ASSERT_TRUE(tail) << out;
    const auto* vec = tail->body.as<For>();
    ASSERT_TRUE(vec && vec->kind == ForKind::Vectorized && is_const_int(vec->extent, 8)) << out;
    EXPECT_TRUE(vec->body.as<IfThenElse>()) << out;
    test::expect_same_results(in, out, {{A, Float(32), 20}});
}

TEST(PartitionLoops, GuardsTrueEverywhereAreRemovedWithoutSplitting) {
    Var A("A", Handle()), v("v");
    Stmt in = sfor(v, 0, 8, IfThenElse::make(likely(v < 8), Store::make(A, 1.0f, v)));
    EXPECT_TRUE(structural_equal(partition_loops(in), sfor(v, 0, 8, Store::make(A, 1.0f, v))));
}

Stmt thread_loop(const Var& v, int64_t extent, const char* tag, Stmt body) {
    return For::make(v, 0, static_cast<int>(extent), ForKind::ThreadBound, std::move(body), tag);
}

Stmt barrier() {
    return Evaluate::make(Call::make(Intrinsic::thread_barrier, {}));
}

// Inside a block's threads, a guard on block and thread variables cannot be split off by a
// constant range: the nest is unswitched on the condition that makes the guard hold for all of
// its iterations (here: the thread's 8 elements all lie below 200).
TEST(PartitionLoops, ThreadNestsAreUnswitchedOnTheirGuards) {
    Var A("A", Handle()), bx("bx"), tx("tx"), i("i");
    Expr x = bx * 64 + tx * 8 + i;
    Stmt store = IfThenElse::make(likely(x < 200), Store::make(A, 1.0f, x));
    Stmt in = thread_loop(
        bx, 4, "blockIdx.x",
        thread_loop(tx, 8, "threadIdx.x", For::make(i, 0, 8, ForKind::Unrolled, store)));
    Stmt out = partition_loops(in);
    const auto* block = out.as<For>();
    ASSERT_TRUE(block) << out;
    const auto* thread = block->body.as<For>();
    ASSERT_TRUE(thread) << out;
    const auto* unswitch = thread->body.as<IfThenElse>();
    ASSERT_TRUE(unswitch && unswitch->else_case.defined()) << out;
    // The condition names only the block and thread variables; the fast nest has no guard, the
    // other keeps it.
    EXPECT_FALSE(uses_var(unswitch->condition, i)) << out;
    EXPECT_EQ(count_nodes(unswitch->then_case, IRNodeType::IfThenElse), 0) << out;
    EXPECT_EQ(count_nodes(unswitch->else_case, IRNodeType::IfThenElse), 1) << out;
    test::expect_same_results(in, out, {{A, Float(32), 256}});
}

// A thread nest of a copy: thread loops inside the block's thread loops are unswitched on a
// condition of the block variable (uniform over the block), the zero-filled read decided.
TEST(PartitionLoops, CopyNestsAreUnswitchedOnTheBlock) {
    Var A("A", Handle()), S("S", Handle()), bx("bx"), tx("tx"), cx("cx");
    Expr row = bx * 16 + cx;
    Stmt copy = thread_loop(cx, 16, "threadIdx.x",
                            Store::make(S, if_then_else(row < 40, load(A, row), 0.0f), cx));
    Stmt in = thread_loop(bx, 3, "blockIdx.x", thread_loop(tx, 16, "threadIdx.x", copy));
    Stmt out = partition_loops(in);
    const auto* unswitch = out.as<For>()->body.as<For>()->body.as<IfThenElse>();
    ASSERT_TRUE(unswitch) << out;
    EXPECT_TRUE(uses_var(unswitch->condition, bx)) << out;
    EXPECT_FALSE(uses_var(unswitch->condition, cx) || uses_var(unswitch->condition, tx)) << out;
    EXPECT_EQ(count_nodes(unswitch->then_case, IRNodeType::Call), 0) << out;  // no if_then_else
    test::expect_same_results(in, out, {{A, Float(32), 40}, {S, Float(32), 16}});
}

// Nests with a barrier are not unswitched (threads would take branches apart), but loops with
// constant bounds still split around their guards: every thread runs the same parts.
TEST(PartitionLoops, LoopsWithBarriersSplitButAreNotUnswitched) {
    Var A("A", Handle()), bx("bx"), tx("tx"), k("k");
    Expr x = k * 8 + tx;
    Stmt body = Seq::make({barrier(), IfThenElse::make(likely(x < 37), Store::make(A, 1.0f, x))});
    Stmt in =
        thread_loop(bx, 1, "blockIdx.x", thread_loop(tx, 8, "threadIdx.x", sfor(k, 0, 5, body)));
    Stmt out = partition_loops(in);
    // k in [0, 4) guard-free, k = 4 guarded; no unswitch around the thread loop's body.
    const auto* thread = out.as<For>()->body.as<For>();
    ASSERT_TRUE(thread) << out;
    const auto* parts = thread->body.as<Seq>();
    ASSERT_TRUE(parts && parts->stmts.size() == 2) << out;
    EXPECT_EQ(count_nodes(parts->stmts[0], IRNodeType::IfThenElse), 0) << out;
    EXPECT_EQ(count_nodes(parts->stmts[1], IRNodeType::IfThenElse), 1) << out;
    EXPECT_EQ(count_nodes(out, IRNodeType::Evaluate), 2) << out;  // one barrier per part
}

/// A convolution's window row loop (ry) under the guard that skips its taps on the padding: the
/// output row `f % 7` of a fused loop that cannot be split on it, a window of 3 rows dilated by
/// `dilation` over 7 input rows with `dilation` rows of padding on each side.
Stmt window_rows(const Var& A, const Var& B, const Var& f, const Var& ry, int64_t dilation,
                 bool unguarded_store = false) {
    Var rx("rx");
    Expr row = floormod(f, 7) + ry * int(dilation);
    Expr inside = row >= int(dilation) && row < int(7 + dilation);
    Stmt update = Store::make(B, load(B, f) + load(A, row * 3 + rx), f);
    Stmt body = IfThenElse::make(inside, update);
    if (unguarded_store) body = Seq::make({body, Store::make(B, load(B, f) * 0.5f, f)});
    return sfor(f, 0, 14, sfor(ry, 0, 3, sfor(rx, 0, 3, body)));
}

/// The (last) For of `v` in `s`, or nullptr.
const For* loop_of(const Stmt& s, const Var& v) {
    const For* found = nullptr;
    post_order_visit(s, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::For && static_cast<const For*>(n)->loop_var.same_as(v))
            found = static_cast<const For*>(n);
    });
    return found;
}

TEST(PartitionLoops, WindowRowsNarrowedToTheRowsInsideTheInput) {
    for (int64_t dilation : {1, 2}) {
        SCOPED_TRACE(dilation);
        Var A("A", Handle()), B("B", Handle()), f("f"), ry("ry");
        Stmt in = window_rows(A, B, f, ry, dilation);
        Stmt out = partition_loops(in);
        // ry runs from max(0, ...) to min(3, ...) of the output row; no guard is left.
        const For* narrowed = loop_of(out, ry);
        ASSERT_TRUE(narrowed) << out;
        EXPECT_FALSE(as_const_int(narrowed->min)) << out;
        EXPECT_FALSE(as_const_int(narrowed->extent)) << out;
        EXPECT_EQ(count_nodes(out, IRNodeType::IfThenElse), 0) << out;
        test::expect_same_results(in, out,
                                  {{A, Float(32), (7 + 2 * dilation) * 3}, {B, Float(32), 14}});
    }
}

TEST(PartitionLoops, WindowRowsAreNotNarrowedWhereAStatementIsOutsideTheGuard) {
    Var A("A", Handle()), B("B", Handle()), f("f"), ry("ry");
    Stmt in = window_rows(A, B, f, ry, 1, /*unguarded_store=*/true);
    Stmt out = partition_loops(in);
    // The unguarded store runs on every row: ry is split (constant parts), the first and last
    // keeping the guard on the output row.
    int parts = 0;
    post_order_visit(out, [&](const IRNode* n) {
        const auto* loop = n->node_type == IRNodeType::For ? static_cast<const For*>(n) : nullptr;
        if (!loop || !loop->loop_var.same_as(ry)) return;
        ++parts;
        EXPECT_TRUE(as_const_int(loop->min) && as_const_int(loop->extent)) << out;
    });
    EXPECT_EQ(parts, 3) << out;
    EXPECT_EQ(count_nodes(out, IRNodeType::IfThenElse), 2) << out;
    test::expect_same_results(in, out, {{A, Float(32), 27}, {B, Float(32), 14}});
}

TEST(PartitionLoops, TwoTilesOfARowAreCutBetweenTheirEdges) {
    // A row of 14 columns in two tiles of 7 (t), a window of 3 columns (rx) over a padding of 1:
    // the first tile meets the left edge, the second the right, no tile neither.
    Var A("A", Handle()), B("B", Handle()), t("t"), rx("rx"), c("c");
    Expr col = t * 7 + c + rx;
    Stmt update = Store::make(B, load(B, t * 7 + c) + load(A, col), t * 7 + c);
    Stmt in = sfor(t, 0, 2,
                   sfor(rx, 0, 3,
                        For::make(c, 0, 7, ForKind::Unrolled,
                                  IfThenElse::make(col >= 1 && col <= 14, update))));
    Stmt out = partition_loops(in);
    const auto* parts = out.as<Seq>();
    ASSERT_TRUE(parts && parts->stmts.size() == 2) << out;
    for (size_t p = 0; p < 2; ++p) {
        const auto* tile = parts->stmts[p].as<For>();
        ASSERT_TRUE(tile && is_const_int(tile->min, int64_t(p)) && is_const_int(tile->extent, 1))
            << out;
    }
    EXPECT_EQ(count_nodes(out, IRNodeType::IfThenElse), 0) << out;
    test::expect_same_results(in, out, {{A, Float(32), 16}, {B, Float(32), 14}});
}

}  // namespace
}  // namespace tessel
