// Reference interpreter: elementwise and broadcast computes, integer wraparound, ideal floats.
#include <gtest/gtest.h>

#include <cmath>

#include "tessel/Tolerance.h"
#include "tessel/te/Operation.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;

TEST(ReferenceElementwise, AddMulTanh) {
    const int n = 17, m = 9;
    Tensor A = placeholder({n, m}, Float(32), "A");
    Tensor B = placeholder({n, m}, Float(32), "B");
    Tensor C = compute(
        {n, m}, [&](Var i, Var j) { return tanh(A(i, j) * B(i, j) + 0.5f); }, "C");
    HostArray a = HostArray::random(Float(32), {n, m}, 1);
    HostArray b = HostArray::random(Float(32), {n, m}, 2, -3, 3);
    std::vector<HostArray> out = evaluate_reference({C}, {{A, a}, {B, b}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{n, m}));
    EXPECT_EQ(out[0].dtype(), Float(32));
    EXPECT_TRUE(out[0].holds_doubles());
    HostArray expect(Float(32), {n, m}, ArrayStorage::Ideal);
    for (int64_t i = 0; i < n * m; ++i) expect.set(i, std::tanh(a.get(i) * b.get(i) + 0.5));
    EXPECT_CLOSE_TO_REFERENCE(out[0], expect, tolerance_for(Float(64)));
}

TEST(ReferenceElementwise, BroadcastColumnPlusRow) {
    const int n = 6, m = 11;
    Tensor A = placeholder({n, 1}, Float(32), "A");
    Tensor B = placeholder({1, m}, Float(32), "B");
    Tensor C = compute(
        {n, m}, [&](Var i, Var j) { return A(i, 0) + B(0, j); }, "C");
    HostArray a = HostArray::random(Float(32), {n, 1}, 3);
    HostArray b = HostArray::random(Float(32), {1, m}, 4);
    HostArray got = evaluate_reference({C}, {{A, a}, {B, b}})[0];
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) EXPECT_EQ(got.at({i, j}), a.at({i, 0}) + b.at({0, j}));
}

TEST(ReferenceElementwise, Int8ComputeWrapsAround) {
    const int n = 200;
    Tensor A = placeholder({n}, Int(8), "A");
    Tensor B = placeholder({n}, Int(8), "B");
    Tensor C = compute(
        {n}, [&](Var i) { return A(i) * B(i) + A(i); }, "C");
    HostArray a = HostArray::random(Int(8), {n}, 5, -128, 127);
    HostArray b = HostArray::random(Int(8), {n}, 6, -128, 127);
    HostArray got = evaluate_reference({C}, {{A, a}, {B, b}})[0];
    EXPECT_EQ(got.dtype(), Int(8));
    int wrapped = 0;
    for (int i = 0; i < n; ++i) {
        int exact = static_cast<int>(a.get_int(i)) * static_cast<int>(b.get_int(i)) +
                    static_cast<int>(a.get_int(i));
        int8_t expect = static_cast<int8_t>(static_cast<uint8_t>(exact & 0xff));
        EXPECT_EQ(got.get_int(i), expect) << "at " << i;
        wrapped += exact != expect;
    }
    EXPECT_GT(wrapped, 100);  // the inputs do overflow int8
}

TEST(ReferenceElementwise, IntegerDivisionAndCasts) {
    const int n = 64;
    Tensor A = placeholder({n}, Int(32), "A");
    Tensor Q = compute(
        {n}, [&](Var i) { return A(i) / 3 + truncdiv(A(i), 3) * 100; }, "Q");
    Tensor F = compute(
        {n}, [&](Var i) { return cast(Int(8), cast(Float(32), A(i)) * 7.5f); }, "F");
    HostArray a = HostArray::random(Int(32), {n}, 7, -50, 50);
    std::vector<HostArray> out = evaluate_reference({Q, F}, {{A, a}});
    for (int i = 0; i < n; ++i) {
        int64_t x = a.get_int(i);
        int64_t floor_q = (x >= 0) ? x / 3 : -((-x + 2) / 3);
        EXPECT_EQ(out[0].get_int(i), floor_q + (x / 3) * 100) << x;
        double f = std::trunc(static_cast<double>(x) * 7.5);
        EXPECT_EQ(out[1].get_int(i), static_cast<int64_t>(std::clamp(f, -128.0, 127.0))) << x;
    }
}

TEST(ReferenceElementwise, FloatsAreHeldIdeal) {
    // A float16 compute of 300 * 300 is 90000 in the ideal semantics (a float16 kernel gives inf;
    // the tolerance, not the reference, accounts for rounding), and intermediates are not rounded.
    Tensor A = placeholder({2}, Float(16), "A");
    Tensor B = compute(
        {2}, [&](Var i) { return A(i) * A(i); }, "B");
    Tensor C = compute(
        {2}, [&](Var i) { return B(i) / A(i); }, "C");
    HostArray a = HostArray::from_values(Float(16), {2}, {300.0, 0.1});
    std::vector<HostArray> out = evaluate_reference({B, C}, {{A, a}});
    EXPECT_EQ(out[0].get(0), 90000.0);
    EXPECT_EQ(out[1].get(0), 300.0);
    double h = a.get(1);
    EXPECT_EQ(out[0].get(1), h * h);
}

TEST(ReferenceElementwise, SymbolicShapeBoundFromInput) {
    Var n("n");
    Tensor A = placeholder({n, 3}, Float(32), "A");
    Tensor B = compute(
        {n, 3}, [&](Var i, Var j) { return A(i, j) * cast(Float(32), n); }, "B");
    HostArray a = HostArray::random(Float(32), {5, 3}, 8);
    HostArray got = evaluate_reference({B}, {{A, a}})[0];
    EXPECT_EQ(got.shape(), (std::vector<int64_t>{5, 3}));
    EXPECT_EQ(got.get(7), a.get(7) * 5);
}

TEST(ReferenceElementwise, GuardedShiftUsesLazyIfThenElse) {
    const int n = 10;
    Tensor A = placeholder({n}, Float(32), "A");
    Tensor B = compute(
        {n}, [&](Var i) { return if_then_else(i > 0, A(i - 1), A(i) * 0.0f); }, "B");
    HostArray a = HostArray::random(Float(32), {n}, 9);
    HostArray got = evaluate_reference({B}, {{A, a}})[0];
    EXPECT_EQ(got.get(0), 0.0);
    for (int i = 1; i < n; ++i) EXPECT_EQ(got.get(i), a.get(i - 1));
}

TEST(ReferenceElementwise, LetAndSharedSubexpressions) {
    const int n = 8;
    Tensor A = placeholder({n}, Float(32), "A");
    Var t("t", Float(32));
    Tensor B = compute(
        {n},
        [&](Var i) {
            Expr shared = A(i) + 1.0f;  // one node used three times
            Expr let = Let::make(t, A(i) * 2.0f, t * t + t);
            return if_then_else(i > 3, shared * shared, shared) + let;
        },
        "B");
    HostArray a = HostArray::random(Float(32), {n}, 10);
    HostArray got = evaluate_reference({B}, {{A, a}})[0];
    for (int i = 0; i < n; ++i) {
        double s = a.get(i) + 1, u = a.get(i) * 2;
        EXPECT_DOUBLE_EQ(got.get(i), (i > 3 ? s * s : s) + u * u + u) << i;
    }
}
