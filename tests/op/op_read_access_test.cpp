// The read analysis behind the default CPU schedules' vector axes (src/op/ReadAccess.h): how
// indices use an axis, and the plans it gives a conv, a matmul, a one-row dense and a transpose.
#include <gtest/gtest.h>

#include "op/ReadAccess.h"
#include "tessel/op/Conv.h"
#include "tessel/op/Elementwise.h"
#include "tessel/op/Matmul.h"
#include "tessel/op/Transform.h"

namespace tessel::testing {
namespace {

using op::internal::axis_use;
using op::internal::AxisUse;

TEST(OpReadAccess, AxisUseOfIndices) {
    Var i("i"), j("j"), r("r");
    int dim = -1;
    EXPECT_EQ(axis_use({i, r}, j, &dim), AxisUse::Invariant);
    EXPECT_EQ(axis_use({i, j}, j, &dim), AxisUse::UnitLast);
    EXPECT_EQ(axis_use({i, j + r}, j, &dim), AxisUse::UnitLast);
    EXPECT_EQ(axis_use({i, r + j}, j, &dim), AxisUse::UnitLast);
    EXPECT_EQ(axis_use({i, j - 1}, j, &dim), AxisUse::UnitLast);
    EXPECT_EQ(axis_use({i, j * 2 + r}, j, &dim), AxisUse::Other);  // a stride
    EXPECT_EQ(axis_use({i, j + j}, j, &dim), AxisUse::Other);
    EXPECT_EQ(axis_use({j, i + j}, j, &dim), AxisUse::Other);  // two indices
    dim = -1;
    EXPECT_EQ(axis_use({j, i}, j, &dim), AxisUse::Bare);
    EXPECT_EQ(dim, 0);
    EXPECT_EQ(axis_use({i, 1 - j}, j, &dim), AxisUse::Other);
}

// The plan of the tiled operation that computes `y` (its only reduction).
op::internal::VectorAxisPlan plan_of(const Tensor& y, const Operation& product) {
    DAGAnalysis a({y});
    return op::internal::plan_vector_axis(a, a.index_of(product), Target("llvm"));
}

TEST(OpReadAccess, PlansOfConvMatmulDenseAndTranspose) {
    // NCHW conv, stride 2, 32 output channels: the channels, the weight packed on its dim 0.
    Tensor x = placeholder({1, 3, 11, 9}), w = placeholder({32, 3, 3, 3});
    Tensor conv = op::conv2d_nchw(x, w, op::conv_params(2, 1));
    auto plan = plan_of(conv, conv.op());
    EXPECT_EQ(plan.axis, 1);
    ASSERT_EQ(plan.packs.size(), 1u);
    EXPECT_TRUE(same_tensor(plan.packs[0].first, w));
    EXPECT_EQ(plan.packs[0].second, 0);
    // A matmul with 64 columns keeps its innermost axis.
    Tensor c = op::matmul(placeholder({8, 5}), placeholder({5, 64}));
    plan = plan_of(c, c.op());
    EXPECT_EQ(plan.axis, -1);
    EXPECT_FALSE(plan.as_reduction);
    // A one-row dense: no output axis, a reduction along K.
    Tensor d = op::dense(placeholder({1, 64}), placeholder({13, 64}));
    plan = plan_of(d, d.op());
    EXPECT_EQ(plan.axis, -1);
    EXPECT_TRUE(plan.as_reduction);
    // transpose reads x[j, i]; relu reads densely.
    Tensor t = op::transpose(placeholder({4, 6}));
    EXPECT_TRUE(op::internal::reads_transposed(as_compute(t.op())));
    EXPECT_FALSE(op::internal::reads_transposed(as_compute(op::relu(placeholder({4, 6})).op())));
}

}  // namespace
}  // namespace tessel::testing
