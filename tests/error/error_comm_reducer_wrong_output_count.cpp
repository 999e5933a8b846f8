// A reducer whose combine returns the wrong number of values.
#include "error/ExpectDSLError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorCommReducerWrongOutputCount, TwoForOne) {
    Reducer r = comm_reducer(
        "twice",
        [](const std::vector<Expr>& l, const std::vector<Expr>& r) {
            return std::vector<Expr>{l[0] + r[0], l[0] * r[0]};
        },
        [](const std::vector<Type>& t) { return std::vector<Expr>{make_zero(t[0])}; });
    Tensor A = placeholder({4}, Float(32), "A");
    IterVar k = reduce_axis({0, 4}, "k");
    expect_dsl_error([&] { r(A(k), {k}); }, {"reducer 'twice'", "2 value(s)", "1 input"});
}
