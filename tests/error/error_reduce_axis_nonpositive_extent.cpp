// reduce_axis with a non-positive constant extent.
#include "error/ExpectDSLError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorReduceAxisNonpositiveExtent, Zero) {
    expect_dsl_error([] { reduce_axis({0, 0}, "k"); }, {"reduce_axis 'k'", "extent is 0"});
}

TEST(ErrorReduceAxisNonpositiveExtent, Negative) {
    expect_dsl_error([] { reduce_axis({5, -3}, "r"); }, {"reduce_axis 'r'", "extent is -3"});
}
