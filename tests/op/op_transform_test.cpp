// transpose, reshape, concatenate, split, pad and take under the default schedules.
#include "op/OpTestUtil.h"
#include "tessel/op/Transform.h"

namespace tessel::testing {
namespace {

TEST(OpTransform, TransposeAndReshape) {
    Tensor x = placeholder({3, 5, 7});
    Tensor t = op::transpose(x, {2, 0, 1});
    EXPECT_EQ(const_shape(t), (std::vector<int64_t>{7, 3, 5}));
    expect_default_schedules_match({t});
    expect_default_schedules_match({op::transpose(x)});
    Tensor r = op::reshape(x, {15, -1});
    EXPECT_EQ(const_shape(r), (std::vector<int64_t>{15, 7}));
    expect_default_schedules_match({r});
}

// Swapping the two innermost axes reads the input transposed: the CPU schedule tiles the last two
// output axes (two more loops) so that each cache line read serves a whole tile.
TEST(OpTransform, TransposeOfTheInnermostAxesIsTiled) {
    for (Tensor t : {op::transpose(placeholder({37, 48})),
                     op::transpose(placeholder({3, 33, 40}), {0, 2, 1})}) {
        Schedule s = op::default_schedule({t}, Target("llvm"));
        EXPECT_EQ(s.stage(s.stage_of(t)).leaf.size(), t.ndim() + 2) << s.to_python();
        expect_default_schedules_match({t});
    }
}

TEST(OpTransform, ConcatenateAndSplit) {
    Tensor a = placeholder({3, 2, 5}), b = placeholder({3, 4, 5}), c = placeholder({3, 1, 5});
    Tensor cat = op::concatenate({a, b, c}, 1);
    EXPECT_EQ(const_shape(cat), (std::vector<int64_t>{3, 7, 5}));
    expect_default_schedules_match({cat});
    std::vector<Tensor> parts = op::split(b, {1, 3}, 1);
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_EQ(const_shape(parts[1]), (std::vector<int64_t>{3, 2, 5}));
    expect_default_schedules_match(parts);
    expect_default_cpu_matches(op::split_sections(a, 3, 0));
}

TEST(OpTransform, PadAndTake) {
    Tensor x = placeholder({3, 5});
    Tensor p = op::pad(x, {1, 0}, {2, 3}, 1.5);
    EXPECT_EQ(const_shape(p), (std::vector<int64_t>{6, 8}));
    expect_default_schedules_match({p});
    Tensor idx = placeholder({2, 3}, Int(32));
    Tensor t = op::take(x, idx, 1);
    EXPECT_EQ(const_shape(t), (std::vector<int64_t>{3, 2, 3}));
    expect_default_schedules_match({t});
}

}  // namespace
}  // namespace tessel::testing
