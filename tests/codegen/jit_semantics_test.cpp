// Integer and float semantics of ir/IR.h in generated code: int8 wrap-around, floor division and
// modulo with negative operands, division by zero, INT_MIN / -1, saturating casts.
#include <gtest/gtest.h>

#include "codegen/CodegenTestUtil.h"

using namespace tessel;
using tessel::testing::expect_jit_matches_reference;

TEST(JitSemantics, Int8Wraps) {
    Tensor A = placeholder({64}, Int(8), "A");
    Tensor B = placeholder({64}, Int(8), "B");
    Tensor C = compute(
        {64}, [&](Var i) { return A(i) * B(i) + A(i) - B(i); }, "C");
    Schedule s = create_schedule({C});
    s.split(s.stage_of(C), 0, 16);
    s.vectorize(s.stage_of(C), 1);
    expect_jit_matches_reference(s);
}

TEST(JitSemantics, DivisionFamilyWithNegativesAndZero) {
    // int32 random inputs lie in [-10, 10]: negative operands and zero divisors.
    Tensor A = placeholder({97}, Int(32), "A");
    Tensor B = placeholder({97}, Int(32), "B");
    std::vector<Tensor> outs;
    outs.push_back(compute(
        {97}, [&](Var i) { return floordiv(A(i), B(i)); }, "fdiv"));
    outs.push_back(compute(
        {97}, [&](Var i) { return floormod(A(i), B(i)); }, "fmod"));
    outs.push_back(compute(
        {97}, [&](Var i) { return truncdiv(A(i), B(i)); }, "tdiv"));
    outs.push_back(compute(
        {97}, [&](Var i) { return truncmod(A(i), B(i)); }, "tmod"));
    for (const Tensor& t : outs) {
        Schedule s = create_schedule({t});
        SCOPED_TRACE(t.name());
        expect_jit_matches_reference(s);
        s.split(s.stage_of(t), 0, 8);
        s.vectorize(s.stage_of(t), 1);
        expect_jit_matches_reference(s);
    }
}

TEST(JitSemantics, IntMinByMinusOne) {
    Tensor A = placeholder({4}, Int(32), "A");
    Tensor C = compute(
        {4},
        [&](Var i) {
            Expr big = make_const(Int(32), int64_t(INT32_MIN));
            return floordiv(big + A(i) - A(i), make_const(Int(32), -1)) +
                   truncdiv(big, A(i) * 0 - 1) + floormod(big, A(i) * 0 - 1);
        },
        "C");
    expect_jit_matches_reference(create_schedule({C}));
}

TEST(JitSemantics, SaturatingCasts) {
    Tensor A = placeholder({50}, Float(32), "A");
    Tensor C = compute(
        {50}, [&](Var i) { return cast(Int(8), A(i) * 40.0f); }, "C");
    expect_jit_matches_reference(create_schedule({C}));
}
