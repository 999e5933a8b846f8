// Element-wise operators with broadcasting, cast, clip, activations and where, alone and as the
// fused chains the default schedules inline.
#include "op/OpTestUtil.h"
#include "tessel/op/Elementwise.h"

namespace tessel::testing {
namespace {

TEST(OpElementwise, ActivationsAndUnaryMaths) {
    Tensor x = placeholder({7, 13});
    for (op::Activation a : {op::Activation::ReLU, op::Activation::GELU, op::Activation::SiLU,
                             op::Activation::Sigmoid, op::Activation::Tanh})
        expect_default_schedules_match({op::activation(x, a)});
    expect_default_schedules_match({op::log(op::add(op::abs(x), op::exp(x)))});
    expect_default_schedules_match({op::sqrt(op::abs(op::negative(x)))});
}

TEST(OpElementwise, BinaryBroadcastsAsNumpy) {
    Tensor a = placeholder({5, 1, 7}), b = placeholder({3, 1});
    Tensor c = op::add(a, b);
    EXPECT_EQ(const_shape(c), (std::vector<int64_t>{5, 3, 7}));
    expect_default_schedules_match({c});
    expect_default_schedules_match({op::maximum(op::multiply(a, b), op::subtract(a, b))});
    expect_default_cpu_matches({op::minimum(op::divide(a, b), a)});
    Tensor pos = op::abs(placeholder({4, 3}));
    expect_default_cpu_matches({op::power(pos, placeholder({3}))});
}

TEST(OpElementwise, CastClipWhere) {
    Tensor x = placeholder({11, 3});
    expect_default_schedules_match({op::cast(op::clip(x, -0.5, 0.25), Int(32))});
    Tensor cond = placeholder({11, 1}, Bool()), y = placeholder({3});
    expect_default_schedules_match({op::where(cond, x, y)});
}

}  // namespace
}  // namespace tessel::testing
