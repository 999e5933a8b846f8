// Pooling under the default CPU and GPU schedules: padding, count_include_pad, global pooling,
// adaptive average pooling with uneven windows, blocked activations (N, C / b, H, W, b).
#include "op/OpTestUtil.h"
#include "tessel/op/Pool.h"

namespace tessel::testing {
namespace {

TEST(OpPool, MaxWithPaddingAndStrideTwo) {
    Tensor x = placeholder({1, 3, 11, 9});
    Tensor y = op::pool2d(x, op::PoolKind::Max, {3, 3}, {2, 2}, {1, 1, 1, 1});
    EXPECT_EQ(const_shape(y), (std::vector<int64_t>{1, 3, 6, 5}));
    expect_default_schedules_match({y}, 9);
}

TEST(OpPool, AverageCountingPaddingOrNot) {
    Tensor x = placeholder({2, 2, 7, 8});
    for (bool include : {true, false})
        expect_default_schedules_match(
            {op::pool2d(x, op::PoolKind::Avg, {3, 2}, {2, 1}, {1, 1, 0, 1}, include)}, 6);
}

TEST(OpPool, Global) {
    Tensor x = placeholder({1, 5, 7, 3});
    expect_default_schedules_match({op::global_pool2d(x, op::PoolKind::Avg)}, 21);
    expect_default_schedules_match({op::global_pool2d(x, op::PoolKind::Max)}, 21);
}

// Blocked activations keep their layout: the window slides over axes 2 and 3, the block of
// channels (the last axis) rides along.
TEST(OpPool, BlockedActivations) {
    Tensor x = placeholder({1, 2, 11, 9, 16});
    Tensor y = op::pool2d(x, op::PoolKind::Max, {3, 3}, {2, 2}, {1, 1, 1, 1});
    EXPECT_EQ(const_shape(y), (std::vector<int64_t>{1, 2, 6, 5, 16}));
    expect_default_schedules_match({y}, 9);
    expect_default_schedules_match(
        {op::pool2d(x, op::PoolKind::Avg, {2, 2}, {2, 2}, {0, 0, 1, 1}, false)}, 4);
    Tensor g = op::global_pool2d(x, op::PoolKind::Avg);
    EXPECT_EQ(const_shape(g), (std::vector<int64_t>{1, 2, 1, 1, 16}));
    expect_default_schedules_match({g}, 99);
    EXPECT_THROW(op::pool2d(placeholder({2, 8, 8}), op::PoolKind::Max, {2, 2}, {2, 2}), DSLError);
    EXPECT_THROW(op::global_pool2d(placeholder({1, 2, 3, 4, 5, 6}), op::PoolKind::Max), DSLError);
}

TEST(OpPool, AdaptiveAverage) {
    Tensor x = placeholder({1, 2, 7, 5});
    Tensor y = op::adaptive_avg_pool2d(x, 3, 2);
    EXPECT_EQ(const_shape(y), (std::vector<int64_t>{1, 2, 3, 2}));
    expect_default_schedules_match({y}, 9);
}

}  // namespace
}  // namespace tessel::testing
