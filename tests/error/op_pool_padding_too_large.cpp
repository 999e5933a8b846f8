// Pooling padding of more than half the window is refused, naming `padding`.
#include "error/ExpectDSLError.h"
#include "tessel/op/Pool.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorOpPoolPaddingTooLarge, Throws) {
    Tensor x = placeholder({1, 1, 8, 8});
    expect_dsl_error(
        [&] {
            op::pool2d(x, op::PoolKind::Max, {3, 3}, {1, 1}, {2, 2, 2, 2});
        },
        {"max_pool2d", "parameter 'padding'", "at most half the window"});
}
