// conv2d whose filters do not have the input's channels names `w`.
#include "error/ExpectDSLError.h"
#include "tessel/op/Conv.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorOpConv2dChannelMismatch, Throws) {
    Tensor x = placeholder({1, 3, 8, 8}), w = placeholder({4, 2, 3, 3});
    expect_dsl_error([&] { op::conv2d_nchw(x, w); },
                     {"conv2d_nchw", "parameter 'w'", "2 input channels per group", "3 channels"});
}
