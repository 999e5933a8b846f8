// A (dilated) kernel larger than the padded input names `w` and both extents.
#include "error/ExpectDSLError.h"
#include "tessel/op/Conv.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorOpConv2dKernelLargerThanInput, Throws) {
    Tensor x = placeholder({1, 3, 4, 4}), w = placeholder({4, 3, 3, 3});
    expect_dsl_error(
        [&] { op::conv2d_nchw(x, w, op::conv_params(1, 0, 2)); },
        {"conv2d_nchw", "parameter 'w'", "kernel extent of 5", "padded input extent 4"});
}
