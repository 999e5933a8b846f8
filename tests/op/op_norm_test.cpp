// softmax, log_softmax, layer_norm, rms_norm and batch_norm under the default schedules.
#include "op/OpTestUtil.h"
#include "tessel/op/Norm.h"

namespace tessel::testing {
namespace {

TEST(OpNorm, SoftmaxOverEachAxis) {
    Tensor x = placeholder({3, 13, 5});
    for (int64_t axis : {-1, 1, 0}) expect_default_schedules_match({op::softmax(x, axis)}, 13);
    expect_default_schedules_match({op::log_softmax(x, 1)}, 13);
}

TEST(OpNorm, LayerAndRmsNorm) {
    Tensor x = placeholder({6, 11}), gamma = placeholder({11}), beta = placeholder({11});
    expect_default_schedules_match({op::layer_norm(x, gamma, beta)}, 11);
    expect_default_cpu_matches({op::layer_norm(x, Tensor(), Tensor())}, 11);
    expect_default_schedules_match({op::rms_norm(x, gamma)}, 11);
}

// Rows whose length has a divisor of at least the vector width: on CPUs each row reduction
// (softmax's max and sum, the norms' sums) is vectorised through rfactor, its partials
// accumulated in registers: two stages more each.
TEST(OpNorm, RowReductionsAreFactoredIntoVectors) {
    Tensor x = placeholder({5, 96}), gamma = placeholder({96}), beta = placeholder({96});
    auto added = [](const Tensor& y) {
        return op::default_schedule({y}, Target("llvm")).stages().size() -
               create_schedule({y}).stages().size();
    };
    Tensor ln = op::layer_norm(x, gamma, beta), rms = op::rms_norm(x, gamma);
    Tensor sm = op::softmax(x, -1), lsm = op::log_softmax(x, -1);
    EXPECT_EQ(added(ln), 4u);
    EXPECT_EQ(added(rms), 2u);
    EXPECT_EQ(added(sm), 4u);
    EXPECT_EQ(added(lsm), 4u);
    for (const Tensor& y : {ln, rms, sm, lsm}) expect_default_cpu_matches({y}, 96);
}

TEST(OpNorm, BatchNormInference) {
    Tensor x = placeholder({2, 3, 5, 7});
    std::vector<Tensor> v;
    for (int i = 0; i < 4; ++i) v.push_back(placeholder({3}));
    // var must be positive: use |var| through the reference's random inputs in [-1, 1] + 2
    Tensor var = compute(
        {3}, [&](Var c) { return v[3](c) + 2.0f; }, "var_pos");
    expect_default_schedules_match({op::batch_norm(x, v[0], v[1], v[2], var)}, 1);
}

}  // namespace
}  // namespace tessel::testing
