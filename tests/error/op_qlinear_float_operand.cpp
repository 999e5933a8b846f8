// A quantized product of a float operand names the operator and the parameter.
#include "error/ExpectDSLError.h"
#include "tessel/op/Quantize.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorOpQlinearFloatOperand, Throws) {
    Tensor x = placeholder({4, 8}, Float(32), "x"), w = placeholder({3, 8}, Int(8), "w");
    Tensor s = placeholder(std::vector<Expr>{}, Float(32), "s");
    op::QuantParams q{s, placeholder(std::vector<Expr>{}, Int(8), "zp")};
    expect_dsl_error([&] { op::qlinear_dense(x, q, w, q, q); },
                     {"qlinear_dense", "parameter 'x'", "must be int8 or uint8, got float32"});
}
