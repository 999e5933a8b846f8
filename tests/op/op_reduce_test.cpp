// sum, mean, max, min, argmax and argmin over any axes, with and without keepdims.
#include "op/OpTestUtil.h"
#include "tessel/op/Reduce.h"

namespace tessel::testing {
namespace {

TEST(OpReduce, OverAxesWithAndWithoutKeepdims) {
    Tensor x = placeholder({5, 7, 3});
    for (bool keep : {false, true}) {
        expect_default_schedules_match({op::sum(x, {0, 2}, keep)}, 15);
        expect_default_schedules_match({op::mean(x, {1}, keep)}, 7);
        expect_default_schedules_match({op::max(x, {-1}, keep)}, 3);
        expect_default_schedules_match({op::min(x, {0}, keep)}, 5);
    }
    Tensor all = op::sum(x, {}, true);
    EXPECT_EQ(const_shape(all), (std::vector<int64_t>{1, 1, 1}));
    expect_default_schedules_match({all}, 105);
}

// A sum over rows (the innermost axis) is vectorised through rfactor on CPUs (the partials in
// registers, four rows at a time), a sum over columns along the output: both match the
// reference.
TEST(OpReduce, RowAndColumnSumsOfVectorWidthMultiples) {
    Tensor x = placeholder({7, 128});
    Tensor rows = op::sum(x, {1}), cols = op::sum(x, {0}), row_max = op::max(x, {-1}, true);
    // x, the partials' registers, the partials, their sum
    EXPECT_EQ(op::default_schedule({rows}, Target("llvm")).stages().size(), 4u);
    EXPECT_EQ(op::default_schedule({cols}, Target("llvm")).stages().size(), 2u);
    expect_default_schedules_match({rows}, 128);
    expect_default_schedules_match({cols}, 7);
    expect_default_schedules_match({row_max}, 128);
}

TEST(OpReduce, ArgmaxAndArgmin) {
    Tensor x = placeholder({5, 9, 4});
    Tensor a = op::argmax(x, 1);
    EXPECT_EQ(a.dtype(), Int(32));
    EXPECT_EQ(const_shape(a), (std::vector<int64_t>{5, 4}));
    expect_default_schedules_match({a});
    expect_default_schedules_match({op::argmin(x, -1, true)});
}

}  // namespace
}  // namespace tessel::testing
