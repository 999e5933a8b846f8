// conv2d with a stride of 0 names `stride`.
#include "error/ExpectDSLError.h"
#include "tessel/op/Conv.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorOpConv2dZeroStride, Throws) {
    Tensor x = placeholder({1, 8, 8, 3}), w = placeholder({3, 3, 3, 4});
    expect_dsl_error([&] { op::conv2d_nhwc(x, w, op::conv_params(0, 1)); },
                     {"conv2d_nhwc", "parameter 'stride'", "at least 1, got 0"});
}
