// conv2d with negative padding names the operator and the parameter.
#include "error/ExpectDSLError.h"
#include "tessel/op/Conv.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorOpConv2dNegativePadding, Throws) {
    Tensor x = placeholder({1, 3, 8, 8}, Float(32), "x"), w = placeholder({4, 3, 3, 3});
    expect_dsl_error([&] { op::conv2d_nchw(x, w, op::conv_params(1, -1)); },
                     {"conv2d_nchw", "parameter 'padding'", "negative"});
}
