// InjectBoundsChecks: an assert before every access, naming the buffer.
#include <gtest/gtest.h>

#include "PassTestUtil.h"
#include "tessel/ir/Equality.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/lower/InjectBoundsChecks.h"

namespace tessel {
namespace {

Expr load(const Var& buf, Expr index) {
    Type t = Float(32, index.type().lanes);
    return Load::make(t, buf, std::move(index));
}

Expr ok(const Expr& i, int size) {
    return i >= 0 && i < size;
}

TEST(InjectBoundsChecks, ScalarLoadAndStore) {
    Buffer A("A", Float(32), {8, 4}), B("B", Float(32), {32});
    Var i("i");
    Stmt body = For::make(i, 0, 32, ForKind::Serial, Store::make(B->data, load(A->data, i + 1), i));
    Stmt out = inject_bounds_checks(LoweredFunc{"f", {A, B}, body}).body;
    Stmt expected = For::make(
        i, 0, 32, ForKind::Serial,
        Seq::make({AssertStmt::make(ok(i + 1, 32), "bounds check: A[i + 1] outside [0, 32)"),
                   AssertStmt::make(ok(i, 32), "bounds check: B[i] outside [0, 32)"),
                   Store::make(B->data, load(A->data, i + 1), i)}));
    EXPECT_TRUE(structural_equal(out, expected)) << out;
    test::TestExecutor ex;
    ex.set_memory(A->data, {Float(32), std::vector<Scalar>(32)});
    ex.set_memory(B->data, {Float(32), std::vector<Scalar>(32)});
    try {
        ex.run(out);
        FAIL() << "expected the bounds check on A to fail";
    } catch (const RuntimeError& e) {
        EXPECT_STREQ(e.what(), "bounds check: A[i + 1] outside [0, 32) (i=31)");
    }
}

TEST(InjectBoundsChecks, RampChecksFirstAndLastLane) {
    Buffer A("A", Float(32), {64});
    Var i("i");
    Expr r = Ramp::make(i * 8, 1, 8);
    Stmt out = inject_bounds_checks(
                   LoweredFunc{"f", {A}, Store::make(A->data, Broadcast::make(0.0f, 8), r)})
                   .body;
    Stmt expected =
        Seq::make({AssertStmt::make(ok(i * 8, 64) && ok(i * 8 + 7, 64),
                                    "bounds check: A[ramp(i * 8, 1, 8)] outside [0, 64)"),
                   Store::make(A->data, Broadcast::make(0.0f, 8), r)});
    EXPECT_TRUE(structural_equal(out, expected)) << out;
}

/// Runs `f` with zeroed memories for its args; returns the RuntimeError message or "".
std::string run_error(const LoweredFunc& f) {
    test::TestExecutor ex;
    for (const Buffer& b : f.args) {
        int64_t n = 1;
        for (const Expr& e : b->shape) n *= *as_const_int(e);
        ex.set_memory(b->data, {b->dtype, std::vector<Scalar>(n)});
    }
    try {
        ex.run(f.body);
    } catch (const RuntimeError& e) {
        return e.what();
    }
    return "";
}

TEST(InjectBoundsChecks, GatherChecksEveryLane) {
    Buffer A("A", Float(32), {16}), B("B", Float(32), {4});
    for (int step : {5, 6}) {
        Expr gather = Ramp::make(0, 1, 4) * Broadcast::make(step, 4);
        LoweredFunc f{
            "f", {A, B}, Store::make(B->data, load(A->data, gather), Ramp::make(0, 1, 4))};
        LoweredFunc checked = inject_bounds_checks(f);
        const auto* seq = checked.body.as<Seq>();
        ASSERT_TRUE(seq && seq->stmts.size() == 3) << checked.body;
        // Lanes 0, 5, 10, 15 are in bounds; 0, 6, 12, 18 are not (the assert fires first).
        std::string err = run_error(checked);
        if (step == 5) {
            EXPECT_EQ(err, "");
        } else {
            EXPECT_EQ(err.rfind("bounds check: A[ramp(0, 1, 4) * broadcast(6, 4)]", 0), 0u) << err;
        }
    }
}

TEST(InjectBoundsChecks, AllocationSizeAndGuardedLoads) {
    Buffer A("A", Float(32), {10});
    Var T("T", Handle()), i("i");
    // T has 2 * 3 elements; the read of A[i - 1] is guarded by i >= 1.
    Stmt body = Allocate::make(
        T, Float(32), {2, 3}, StorageScope::Local,
        For::make(i, 0, 6, ForKind::Serial,
                  Store::make(T, if_then_else(i >= 1, load(A->data, i - 1), 0.0f), i)));
    Stmt out = inject_bounds_checks(LoweredFunc{"f", {A}, body}).body;
    std::string printed = to_string(out);
    EXPECT_NE(
        printed.find("assert(not i >= 1 or i - 1 >= 0 and i - 1 < 10, \"bounds check: A[i - 1] "
                     "outside [0, 10)\")"),
        std::string::npos)
        << printed;
    EXPECT_NE(printed.find("bounds check: T[i] outside [0, 6)"), std::string::npos) << printed;
    test::TestExecutor ex;
    ex.set_memory(A->data, {Float(32), std::vector<Scalar>(10)});
    EXPECT_NO_THROW(ex.run(out));
}

TEST(InjectBoundsChecks, LetBoundIndexAndUnknownBuffers) {
    Buffer A("A", Float(32), {4});
    Var x("x"), U("U", Handle()), i("i");
    Expr value = Let::make(x, i * 2, load(A->data, x));
    Stmt out = inject_bounds_checks(LoweredFunc{"f", {A}, Store::make(U, value, i)}).body;
    Stmt expected = Seq::make(
        {AssertStmt::make(Let::make(x, i * 2, ok(x, 4)), "bounds check: A[x] outside [0, 4)"),
         Store::make(U, value, i)});
    EXPECT_TRUE(structural_equal(out, expected)) << out;
}

}  // namespace
}  // namespace tessel
