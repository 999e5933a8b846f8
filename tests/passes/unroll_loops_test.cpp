// UnrollLoops: Unrolled loops → simplified copies; the auto-unroll pragma; the cap.
#include <gtest/gtest.h>

#include "PassTestUtil.h"
#include "tessel/ir/Equality.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/lower/UnrollLoops.h"

namespace tessel {
namespace {

Expr load(const Var& buf, Expr index) {
    return Load::make(Float(32), buf, std::move(index));
}

TEST(UnrollLoops, UnrolledLoopBecomesSimplifiedCopies) {
    Var A("A", Handle()), B("B", Handle()), i("i"), u("u");
    Stmt in = For::make(i, 0, 2, ForKind::Serial,
                        For::make(u, 0, 3, ForKind::Unrolled,
                                  Store::make(B, load(A, i * 3 + u) * 2.0f, i * 3 + u)));
    Stmt out = unroll_loops(in);
    EXPECT_EQ(to_string(out),
              "for i in range(0, 2):\n"
              "    B[i * 3] = A[i * 3] * 2.0f\n"
              "    B[i * 3 + 1] = A[i * 3 + 1] * 2.0f\n"
              "    B[i * 3 + 2] = A[i * 3 + 2] * 2.0f\n");
    test::expect_same_results(in, out, {{A, Float(32), 6}, {B, Float(32), 6}});
}

TEST(UnrollLoops, NonzeroMinAndNestedUnrolledLoops) {
    Var A("A", Handle()), u("u"), w("w");
    Stmt in =
        For::make(u, 1, 2, ForKind::Unrolled,
                  For::make(w, 0, 2, ForKind::Unrolled, Store::make(A, u * 10 + w, u * 2 + w)));
    Stmt out = unroll_loops(in);
    Stmt expected = Seq::make({Store::make(A, 10, 2), Store::make(A, 11, 3), Store::make(A, 20, 4),
                               Store::make(A, 21, 5)});
    EXPECT_TRUE(structural_equal(out, expected)) << out;
}

TEST(UnrollLoops, ZeroExtentIsANoOp) {
    Var A("A", Handle()), u("u");
    Stmt out = unroll_loops(For::make(u, 0, 0, ForKind::Unrolled, Store::make(A, 1, u)));
    EXPECT_TRUE(structural_equal(out, Evaluate::make(0))) << out;
}

TEST(UnrollLoops, NonConstantExtentStaysASerialLoop) {
    Var A("A", Handle()), u("u"), n("n");
    Stmt out = unroll_loops(For::make(u, 0, n, ForKind::Unrolled, Store::make(A, 1, u)));
    EXPECT_TRUE(structural_equal(out, For::make(u, 0, n, ForKind::Serial, Store::make(A, 1, u))))
        << out;
}

TEST(UnrollLoops, ExtentBeyondTheCapIsAnInternalError) {
    Var A("A", Handle()), u("u");
    Stmt in = For::make(u, 0, 600, ForKind::Unrolled, Store::make(A, 1, u));
    EXPECT_THROW(unroll_loops(in), InternalError);
    EXPECT_THROW(unroll_loops(For::make(u, 0, 9, ForKind::Unrolled, Store::make(A, 1, u)), 8),
                 InternalError);
    EXPECT_NO_THROW(unroll_loops(For::make(u, 0, 8, ForKind::Unrolled, Store::make(A, 1, u)), 8));
}

TEST(UnrollLoops, AutoUnrollUnrollsSmallInnermostSerialLoops) {
    Var A("A", Handle()), i("i"), j("j"), k("k");
    // j: 4 steps (unrolled); then i's body has no loop: 8 * 4 = 32 > 16 steps, i stays.
    Stmt nest = For::make(i, 0, 8, ForKind::Serial,
                          For::make(j, 0, 4, ForKind::Serial, Store::make(A, i + j, i * 4 + j)));
    Stmt out = unroll_loops(AttrStmt::make(kAutoUnrollMaxStep, 16, nest));
    EXPECT_EQ(to_string(out),
              "for i in range(0, 8):\n"
              "    A[i * 4] = i\n"
              "    A[i * 4 + 1] = i + 1\n"
              "    A[i * 4 + 2] = i + 2\n"
              "    A[i * 4 + 3] = i + 3\n");
    test::expect_same_results(nest, out, {{A, Int(32), 32}});
    // With a budget of 32 the whole nest unrolls; without the pragma nothing does.
    Stmt all = unroll_loops(AttrStmt::make(kAutoUnrollMaxStep, 32, nest));
    ASSERT_TRUE(all.as<Seq>()) << all;
    EXPECT_EQ(all.as<Seq>()->stmts.size(), 32u);
    EXPECT_TRUE(unroll_loops(nest).same_as(nest));
    // A loop with a non-constant extent, or a parallel one, is never auto-unrolled.
    Var n("n");
    Stmt sym = For::make(k, 0, n, ForKind::Serial, Store::make(A, 0, k));
    EXPECT_TRUE(structural_equal(unroll_loops(AttrStmt::make(kAutoUnrollMaxStep, 16, sym)), sym));
    Stmt par = For::make(k, 0, 2, ForKind::Parallel, Store::make(A, 0, k));
    EXPECT_TRUE(structural_equal(unroll_loops(AttrStmt::make(kAutoUnrollMaxStep, 16, par)), par));
}

}  // namespace
}  // namespace tessel
