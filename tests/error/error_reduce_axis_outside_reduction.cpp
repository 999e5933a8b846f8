// A reduce axis used outside a reduction over it.
#include "error/ExpectDSLError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorReduceAxisOutsideReduction, InAComputeWithoutReduce) {
    Tensor A = placeholder({4, 4}, Float(32), "A");
    IterVar k = reduce_axis({0, 4}, "k");
    expect_dsl_error([&] { compute({4}, [&](Var i) { return A(i, k); }, "B"); },
                     {"compute 'B'", "reduce axis 'k'", "outside"});
}

TEST(ErrorReduceAxisOutsideReduction, InsideAReductionOverAnotherAxis) {
    Tensor A = placeholder({4, 4}, Float(32), "A");
    IterVar k = reduce_axis({0, 4}, "k"), r = reduce_axis({0, 4}, "r");
    expect_dsl_error([&] { compute({4}, [&](Var) { return sum(A(r, k), {r}); }, "C"); },
                     {"compute 'C'", "reduce axis 'k'", "outside"});
}

TEST(ErrorReduceAxisOutsideReduction, InTheCondition) {
    Tensor A = placeholder({4}, Float(32), "A");
    IterVar k = reduce_axis({0, 4}, "k"), r = reduce_axis({0, 4}, "r");
    expect_dsl_error(
        [&] { compute({1}, [&](Var) { return sum(A(r), {r}, k.var() < 2); }, "D"); },
        {"compute 'D'", "reduce axis 'k'"});
}
