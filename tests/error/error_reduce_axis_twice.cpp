// A reduce axis reduced twice: listed twice, or reduced by two reductions.
#include "error/ExpectDSLError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorReduceAxisTwice, ListedTwice) {
    Tensor A = placeholder({4, 4}, Float(32), "A");
    IterVar k = reduce_axis({0, 4}, "k");
    expect_dsl_error([&] { compute({4}, [&](Var i) { return sum(A(i, k), {k, k}); }, "B"); },
                     {"compute 'B'", "reduce axis 'k'", "twice"});
}

TEST(ErrorReduceAxisTwice, TwoReductionsInOneBody) {
    Tensor A = placeholder({4, 4}, Float(32), "A");
    IterVar k = reduce_axis({0, 4}, "k");
    expect_dsl_error(
        [&] {
            compute({4}, [&](Var i) { return sum(A(i, k), {k}) + max(A(k, i), {k}); }, "C");
        },
        {"compute 'C'", "reduce axis 'k'", "twice"});
}

TEST(ErrorReduceAxisTwice, TwoOutputsReducingTheSameAxis) {
    Tensor A = placeholder({4, 4}, Float(32), "A");
    IterVar k = reduce_axis({0, 4}, "k");
    expect_dsl_error(
        [&] {
            compute_multi({4}, [&](Var i) {
                return std::vector<Expr>{sum(A(i, k), {k}), max(A(i, k), {k})};
            }, "D");
        },
        {"compute 'D'", "reduce axis 'k'", "twice"});
}
