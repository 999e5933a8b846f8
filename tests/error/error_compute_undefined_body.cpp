// A compute function returning an undefined expression, or no expression at all.
#include "error/ExpectDSLError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorComputeUndefinedBody, Undefined) {
    expect_dsl_error([] { compute({4}, [](Var) { return Expr(); }, "B"); },
                     {"compute 'B'", "undefined expression", "output 0"});
}

TEST(ErrorComputeUndefinedBody, NoOutputs) {
    expect_dsl_error([] { compute_multi({4}, [](Var) { return std::vector<Expr>{}; }, "C"); },
                     {"compute 'C'", "no expression"});
}
