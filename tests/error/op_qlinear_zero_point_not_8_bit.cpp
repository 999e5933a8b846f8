// An int16 zero point (the result's: it chooses the result's dtype) is refused.
#include "error/ExpectDSLError.h"
#include "tessel/op/Quantize.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorOpQlinearZeroPointNot8Bit, Throws) {
    Tensor x = placeholder({1, 2, 5, 5}, Int(8), "x"), w = placeholder({3, 2, 3, 3}, Int(8), "w");
    Tensor s = placeholder({1}, Float(32), "s");
    op::QuantParams q{s, placeholder({1}, Int(8), "zp")};
    op::QuantParams y{s, placeholder({1}, Int(16), "y_zp")};
    expect_dsl_error(
        [&] { op::qlinear_conv2d_nchw(x, q, w, q, y); },
        {"qlinear_conv2d_nchw", "parameter 'y_zero_point'", "must be int8 or uint8, got int16"});
}
