// groups that do not divide the channels are named.
#include "error/ExpectDSLError.h"
#include "tessel/op/Conv.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorOpConv2dGroupsNotDividing, Throws) {
    Tensor x = placeholder({1, 4, 8, 8}), w = placeholder({6, 2, 3, 3});
    expect_dsl_error([&] { op::conv2d_nchw(x, w, op::conv_params(1, 1, 1, 3)); },
                     {"conv2d_nchw", "parameter 'groups'", "must divide the input channels (4)"});
}
