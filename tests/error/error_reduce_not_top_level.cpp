// A Reduce that is not the whole body of its compute.
#include "error/ExpectDSLError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorReduceNotTopLevel, ReducePlusConstant) {
    Tensor A = placeholder({4, 4}, Float(32), "A");
    IterVar k = reduce_axis({0, 4}, "k");
    expect_dsl_error([&] { compute({4}, [&](Var i) { return sum(A(i, k), {k}) + 1.0f; }, "B"); },
                     {"compute 'B'", "Reduce must be the whole body"});
}

TEST(ErrorReduceNotTopLevel, ReduceInsideACall) {
    Tensor A = placeholder({4, 4}, Float(32), "A");
    IterVar k = reduce_axis({0, 4}, "k");
    expect_dsl_error([&] { compute({4}, [&](Var i) { return exp(max(A(i, k), {k})); }, "C"); },
                     {"compute 'C'", "Reduce must be the whole body"});
}

TEST(ErrorReduceNotTopLevel, ReduceInsideAReduce) {
    Tensor A = placeholder({4, 4}, Float(32), "A");
    IterVar k = reduce_axis({0, 4}, "k"), r = reduce_axis({0, 4}, "r");
    expect_dsl_error(
        [&] { compute({1}, [&](Var) { return sum(max(A(r, k), {k}), {r}); }, "D"); },
        {"compute 'D'", "Reduce must be the whole body"});
}
