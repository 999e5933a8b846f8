// A reduction axis out of range, or listed twice, names `axis`.
#include "error/ExpectDSLError.h"
#include "tessel/op/Reduce.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorOpReduceAxisOutOfRange, Throws) {
    Tensor x = placeholder({3, 4});
    expect_dsl_error([&] { op::sum(x, {2}); }, {"sum", "parameter 'axis'", "(2) is out of range"});
    expect_dsl_error([&] { op::max(x, {1, -1}); }, {"max", "parameter 'axis'", "twice"});
}
