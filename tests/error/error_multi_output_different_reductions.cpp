// compute_multi outputs that are different reductions, or mix Reduce and non-Reduce.
#include "error/ExpectDSLError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorMultiOutputDifferentReductions, MixedReduceAndValue) {
    Tensor A = placeholder({4, 4}, Float(32), "A");
    IterVar k = reduce_axis({0, 4}, "k");
    expect_dsl_error(
        [&] {
            compute_multi({4}, [&](Var i) {
                return std::vector<Expr>{sum(A(i, k), {k}), A(i, 0)};
            }, "B");
        },
        {"compute 'B'", "output 1 is not a Reduce"});
}

TEST(ErrorMultiOutputDifferentReductions, TwoReducerCalls) {
    Tensor A = placeholder({4, 4}, Float(32), "A");
    IterVar k = reduce_axis({0, 4}, "k"), r = reduce_axis({0, 4}, "r");
    expect_dsl_error(
        [&] {
            compute_multi({4}, [&](Var i) {
                return std::vector<Expr>{sum(A(i, k), {k}), sum(A(i, r), {r})};
            }, "C");
        },
        {"compute 'C'", "different reductions"});
}
