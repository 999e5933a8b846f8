// A zero point of another dtype than its tensor's names the zero point and the tensor.
#include "error/ExpectDSLError.h"
#include "tessel/op/Quantize.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorOpQlinearZeroPointDtype, Throws) {
    Tensor x = placeholder({4, 8}, UInt(8), "x"), w = placeholder({3, 8}, Int(8), "w");
    Tensor s = placeholder(std::vector<Expr>{}, Float(32), "s");
    op::QuantParams q{s, placeholder(std::vector<Expr>{}, Int(8), "zp")};
    expect_dsl_error(
        [&] { op::qlinear_dense(x, q, w, q, q); },
        {"qlinear_dense", "parameter 'x_zero_point'", "has dtype int8 but 'x' has uint8"});
}
