// DAG analysis for the sketch rules, with known answers (te/DAGAnalysis.h).
#include <gtest/gtest.h>

#include "tessel/auto_schedule/task/Workload.h"
#include "tessel/ir/IROperator.h"
#include "tessel/te/DAGAnalysis.h"
#include "tessel/te/Operation.h"

using namespace tessel;

namespace {

std::vector<int64_t> v(std::initializer_list<int64_t> l) {
    return l;
}

// C = A @ B, then D = C + bias[j], then R = relu(D); returns {A, B, bias, C, D, R}.
std::vector<Tensor> matmul_bias_relu() {
    Tensor A = placeholder({8, 4}, Float(32), "A");
    Tensor B = placeholder({4, 6}, Float(32), "B");
    Tensor bias = placeholder({6}, Float(32), "bias");
    IterVar k = reduce_axis({0, 4}, "k");
    Tensor C = compute(
        {8, 6}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Tensor D = compute(
        {8, 6}, [&](Var i, Var j) { return C(i, j) + bias(j); }, "D");
    Tensor R = compute(
        {8, 6}, [&](Var i, Var j) { return max(D(i, j), 0.0f); }, "R");
    return {A, B, bias, C, D, R};
}

}  // namespace

TEST(DAGAnalysis, Matmul) {
    TensorDAG dag = make_workload("matmul", {int64_t(8), int64_t(6), int64_t(4), Float(32)});
    DAGAnalysis a(dag.outputs);
    ASSERT_EQ(a.num_ops(), 3);  // A, B, C: the stages of create_schedule
    int A = a.index_of(dag.inputs[0].op()), B = a.index_of(dag.inputs[1].op());
    int C = a.index_of(dag.outputs[0].op());
    EXPECT_EQ(A, 0);
    EXPECT_EQ(C, 2);
    EXPECT_TRUE(a.is_placeholder(A));
    EXPECT_EQ(a.producers(C), (std::vector<int>{A, B}));
    EXPECT_EQ(a.consumers(A), (std::vector<int>{C}));
    EXPECT_TRUE(a.is_output(C));
    EXPECT_TRUE(a.has_reduction(C));
    EXPECT_TRUE(a.needs_multi_level_tiling(C));  // A[i, k] misses j, B[k, j] misses i
    EXPECT_FALSE(a.has_simple_access(C));        // k is no axis of C
    EXPECT_FALSE(a.is_inlinable(C));
    EXPECT_FALSE(a.is_strictly_inlinable(C));
    EXPECT_EQ(a.elementwise_consumer(C), -1);  // no consumer
    EXPECT_EQ(a.spatial_extents(C), v({8, 6}));
    EXPECT_EQ(a.reduction_extents(C), v({4}));
    EXPECT_EQ(a.spatial_extents(A), v({8, 4}));
    EXPECT_EQ(a.flops(C), 2.0 * 8 * 6 * 4);
    EXPECT_EQ(a.flops(A), 0.0);
}

TEST(DAGAnalysis, MatmulBiasReluFusesIntoTheElementwiseChain) {
    std::vector<Tensor> t = matmul_bias_relu();
    DAGAnalysis a({t[5]});
    int C = a.index_of(t[3].op()), D = a.index_of(t[4].op()), R = a.index_of(t[5].op());
    int bias = a.index_of(t[2].op());
    EXPECT_TRUE(a.needs_multi_level_tiling(C));
    EXPECT_FALSE(a.needs_multi_level_tiling(D));  // bias[j] misses i, but D reduces nothing
    EXPECT_TRUE(a.is_strictly_inlinable(D));      // broadcast reads are simple
    EXPECT_TRUE(a.is_inlinable(D));
    EXPECT_FALSE(a.is_strictly_inlinable(R));  // the output
    EXPECT_EQ(a.producers(D), (std::vector<int>{C, bias}));
    EXPECT_EQ(a.elementwise_consumer(C), D);
    EXPECT_TRUE(a.elementwise_match(C, R));  // through D
    EXPECT_FALSE(a.elementwise_match(bias, D));
    // With D inlined, C's consumer is R, still element-wise matched.
    std::vector<bool> inlined(a.num_ops(), false);
    inlined[D] = true;
    EXPECT_EQ(a.consumers(C, inlined), (std::vector<int>{R}));
    EXPECT_EQ(a.elementwise_consumer(C, inlined), R);
    EXPECT_EQ(a.producers(R, inlined), (std::vector<int>{C, bias}));  // sorted: C is stage 2
}

TEST(DAGAnalysis, Softmax) {
    TensorDAG dag = make_workload("softmax", {int64_t(5), int64_t(13), Float(32)});
    DAGAnalysis a(dag.outputs);
    ASSERT_EQ(a.num_ops(), 5);  // X, row_max, exp, row_sum, softmax
    const int X = 0, max = 1, exp = 2, sum = 3, out = 4;
    EXPECT_EQ(a.ops()[exp]->name, "exp");
    EXPECT_FALSE(a.needs_multi_level_tiling(max));  // X[i, k] misses no axis of row_max
    EXPECT_FALSE(a.needs_multi_level_tiling(sum));
    EXPECT_FALSE(a.is_inlinable(max));
    EXPECT_TRUE(a.is_inlinable(exp));
    EXPECT_FALSE(a.is_strictly_inlinable(exp));  // exp is expensive
    EXPECT_EQ(a.consumers(exp), (std::vector<int>{sum, out}));
    EXPECT_EQ(a.consumers(X), (std::vector<int>{max, exp}));
    EXPECT_EQ(a.elementwise_consumer(exp), -1);  // two consumers
    EXPECT_EQ(a.elementwise_consumer(max), -1);  // exp's shape differs
    EXPECT_EQ(a.reduction_extents(sum), v({13}));
    EXPECT_EQ(a.spatial_extents(sum), v({5}));
    EXPECT_EQ(a.flops(max), 5.0 * 13);  // one max per point
}

TEST(DAGAnalysis, Conv2dWithPaddingAndRelu) {
    TensorDAG dag =
        make_workload("conv2d", {int64_t(1), int64_t(3), int64_t(11), int64_t(10), int64_t(4),
                                 int64_t(3), int64_t(2), int64_t(1), Float(32)});
    DAGAnalysis a(dag.outputs);
    ASSERT_EQ(a.num_ops(), 5);  // X, pad, W, conv, relu
    const int pad = 1, conv = 3, relu = 4;
    EXPECT_EQ(a.ops()[conv]->name, "conv");
    EXPECT_TRUE(a.is_inlinable(pad));
    EXPECT_FALSE(a.is_strictly_inlinable(pad));  // if_then_else branches
    EXPECT_TRUE(a.needs_multi_level_tiling(conv));
    EXPECT_FALSE(a.needs_multi_level_tiling(relu));
    EXPECT_EQ(a.elementwise_consumer(conv), relu);
    EXPECT_EQ(a.spatial_extents(conv), v({1, 4, 6, 5}));
    EXPECT_EQ(a.reduction_extents(conv), v({3, 3, 3}));
    EXPECT_EQ(a.flops(conv), 2.0 * 4 * 6 * 5 * 27);
}

TEST(DAGAnalysis, ElementwiseChainTransposeAndOuterProduct) {
    Tensor X = placeholder({4, 5}, Float(32), "X");
    Tensor Y = compute(
        {4, 5}, [&](Var i, Var j) { return X(i, j) * 2.0f; }, "Y");
    Tensor S = compute(
        {4, 5}, [&](Var i, Var j) { return Y(i, j + 0) + Y(i, 0); }, "S");
    Tensor T = compute(
        {5, 4}, [&](Var j, Var i) { return S(i, j); }, "T");
    Tensor U = compute(
        {5, 4}, [&](Var j, Var i) { return T(j, i) * T(j, i); }, "U");
    DAGAnalysis a({U});
    int y = a.index_of(Y.op()), s = a.index_of(S.op()), t = a.index_of(T.op());
    EXPECT_TRUE(a.is_strictly_inlinable(y));
    EXPECT_TRUE(a.is_strictly_inlinable(s));   // constant and shifted indices are simple
    EXPECT_FALSE(a.is_strictly_inlinable(t));  // a transpose reads out of order
    EXPECT_TRUE(a.has_simple_access(t));
    EXPECT_TRUE(a.is_inlinable(t));
    EXPECT_EQ(a.elementwise_consumer(y), -1);  // S also reads Y[i, 0], which misses j
    EXPECT_EQ(a.elementwise_consumer(s), -1);  // T has another shape
    EXPECT_EQ(a.elementwise_consumer(t), a.index_of(U.op()));
    for (int op = 0; op < a.num_ops(); ++op) EXPECT_FALSE(a.needs_multi_level_tiling(op));

    Tensor P = placeholder({6}, Float(32), "P"), Q = placeholder({7}, Float(32), "Q");
    Tensor O = compute(
        {6, 7}, [&](Var i, Var j) { return P(i) * Q(j); }, "outer");
    DAGAnalysis outer({O});
    EXPECT_TRUE(outer.needs_multi_level_tiling(outer.index_of(O.op())));  // two tensors miss
}

TEST(DAGAnalysis, SymbolicExtents) {
    Var n("n");
    Tensor A = placeholder({n, 3}, Float(32), "A");
    Tensor B = compute(
        {n, 3}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    DAGAnalysis a({B});
    EXPECT_EQ(a.spatial_extents(1), v({-1, 3}));
    EXPECT_EQ(a.spatial_extents(0), v({-1, 3}));
    EXPECT_THROW(a.flops(1), DSLError);
    EXPECT_THROW(a.consumers(2), DSLError);
    EXPECT_THROW(a.index_of(placeholder({1}).op()), DSLError);
}
