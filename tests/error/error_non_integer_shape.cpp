// A shape entry that is not a scalar integer.
#include "error/ExpectDSLError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorNonIntegerShape, FloatExtent) {
    expect_dsl_error([] { placeholder({4, Expr(2.5f)}, Float(32), "A"); },
                     {"placeholder 'A'", "dimension 1", "float32", "integer"});
}

TEST(ErrorNonIntegerShape, UndefinedExtent) {
    expect_dsl_error([] { compute({Expr()}, [](Var i) { return i; }, "B"); },
                     {"compute 'B'", "dimension 0", "undefined"});
}
