// Arithmetic on operands of different dtypes without an explicit cast.
#include "error/ExpectDSLError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorMismatchedDtypes, FloatPlusInt) {
    Tensor A = placeholder({4}, Float(32), "A");
    Tensor B = placeholder({4}, Int(32), "B");
    expect_dsl_error([&] { compute({4}, [&](Var i) { return A(i) + B(i); }, "C"); },
                     {"compute 'C'", "float32", "int32", "cast"});
}

TEST(ErrorMismatchedDtypes, Float32TimesFloat16) {
    Tensor A = placeholder({4}, Float(32), "A");
    Tensor H = placeholder({4}, Float(16), "H");
    expect_dsl_error([&] { compute({4}, [&](Var i) { return A(i) * H(i); }, "D"); },
                     {"compute 'D'", "float32", "float16"});
}
