// Element-wise operands whose shapes do not broadcast name both extents and the dimension.
#include "error/ExpectDSLError.h"
#include "tessel/op/Elementwise.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorOpBroadcastMismatch, Throws) {
    Tensor a = placeholder({3, 4}), b = placeholder({3});
    expect_dsl_error([&] { op::add(a, b); },
                     {"add", "do not broadcast", "extents 4 and 3", "dimension 1"});
}
