// Indexing a tensor with a float or bool expression.
#include "error/ExpectDSLError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorNonIntegerIndex, FloatIndex) {
    Tensor A = placeholder({4}, Float(32), "A");
    Tensor I = placeholder({4}, Float(32), "I");
    expect_dsl_error([&] { compute({4}, [&](Var i) { return A(I(i)); }, "B"); },
                     {"compute 'B'", "tensor 'A'", "index 0", "float32", "integer"});
}

TEST(ErrorNonIntegerIndex, BoolIndex) {
    Tensor A = placeholder({4}, Float(32), "A");
    Var i("i");
    expect_dsl_error([&] { A(i < 2); }, {"tensor 'A'", "bool"});
}
