// placeholder, compute and compute_multi: shapes, dtypes, axes, outputs.
#include <gtest/gtest.h>

#include "tessel/te/Operation.h"

using namespace tessel;

TEST(TeCompute, PlaceholderShapeAndDtype) {
    Tensor A = placeholder({4, 8}, Float(16), "A");
    EXPECT_EQ(A.name(), "A");
    EXPECT_EQ(A.dtype(), Float(16));
    ASSERT_EQ(A.ndim(), 2u);
    EXPECT_TRUE(is_const_int(A.shape()[0], 4));
    EXPECT_TRUE(is_const_int(A.shape()[1], 8));
    EXPECT_EQ(A.shape()[0].type(), Int(32));
    ASSERT_NE(as_placeholder(A.op()), nullptr);
    EXPECT_EQ(as_compute(A.op()), nullptr);
    EXPECT_EQ(op_num_outputs(A.op()), 1);
    EXPECT_TRUE(op_inputs(A.op()).empty());
}

TEST(TeCompute, ElementwiseCompute) {
    Tensor A = placeholder({4, 8}, Float(32), "A");
    Tensor B = compute({4, 8}, [&](Var i, Var j) { return A(i, j) * 2.0f + 1.0f; }, "B");
    EXPECT_EQ(B.name(), "B");
    EXPECT_EQ(B.dtype(), Float(32));
    const ComputeOpNode* c = as_compute(B.op());
    ASSERT_NE(c, nullptr);
    ASSERT_EQ(c->axis.size(), 2u);
    EXPECT_TRUE(c->reduce_axis.empty());
    EXPECT_EQ(c->axis[0].kind(), IterVarKind::DataPar);
    EXPECT_EQ(c->axis[0].var().type(), Int(32));
    EXPECT_TRUE(is_const_int(c->axis[1].dom().extent, 8));
    EXPECT_TRUE(is_zero(c->axis[1].dom().min));
    ASSERT_EQ(c->body.size(), 1u);
    std::vector<Tensor> in = op_inputs(B.op());
    ASSERT_EQ(in.size(), 1u);
    EXPECT_TRUE(same_tensor(in[0], A));
}

TEST(TeCompute, VectorFunctionAndScalarShape) {
    Tensor A = placeholder({3}, Int(32), "A");
    Tensor S = compute({}, [&](const std::vector<Var>& v) -> Expr {
        EXPECT_TRUE(v.empty());
        return A(0) + A(2);
    }, "S");
    EXPECT_EQ(S.ndim(), 0u);
    EXPECT_EQ(S.dtype(), Int(32));
    Tensor T = compute({3}, [&](const std::vector<Var>& v) { return S() + A(v[0]); }, "T");
    EXPECT_EQ(op_inputs(T.op()).size(), 2u);
}

TEST(TeCompute, BodyDtypeDecidesTensorDtype) {
    Tensor A = placeholder({5}, Int(8), "A");
    Tensor B = compute({5}, [&](Var i) { return cast(Float(64), A(i)); }, "B");
    EXPECT_EQ(B.dtype(), Float(64));
    Tensor C = compute({5}, [&](Var i) { return A(i) > 0; }, "C");
    EXPECT_EQ(C.dtype(), Bool());
}

TEST(TeCompute, HugeShapesUseInt64Indices) {
    Tensor A = placeholder({int64_t(1) << 33}, Float(32), "A");
    EXPECT_EQ(A.shape()[0].type(), Int(64));
    // Each extent fits int32, the element count does not.
    Tensor B = placeholder({65536, 65536}, Float(32), "B");
    EXPECT_EQ(B.shape()[0].type(), Int(64));
    EXPECT_EQ(B.shape()[1].type(), Int(64));
    Tensor C = compute({65536, 65536}, [&](Var i, Var j) { return B(i, j); }, "C");
    EXPECT_EQ(as_compute(C.op())->axis[0].var().type(), Int(64));
    // Just below the limit stays int32.
    Tensor D = placeholder({46340, 46340}, Float(32), "D");
    EXPECT_EQ(D.shape()[0].type(), Int(32));
    // An int64 symbolic extent makes the whole shape int64.
    Var n("n", Int(64));
    Tensor E = placeholder({n, 4}, Float(32), "E");
    EXPECT_EQ(E.shape()[1].type(), Int(64));
    EXPECT_TRUE(is_const_int(E.shape()[1], 4));
}

TEST(TeCompute, IndicesAreCastToTheIndexDtype) {
    Tensor A = placeholder({int64_t(1) << 33}, Float(32), "A");
    Tensor small = placeholder({10}, Float(32), "small");
    Tensor B = compute({10}, [&](Var i) { return A(i) + small(int64_t(3)); }, "B");
    const auto* add = as_compute(B.op())->body[0].as<Add>();
    ASSERT_NE(add, nullptr);
    const auto* read = add->a.as<TensorRead>();
    ASSERT_NE(read, nullptr);
    EXPECT_EQ(read->indices[0].type(), Int(64));
    EXPECT_NE(read->indices[0].as<Cast>(), nullptr);
    const auto* read_small = add->b.as<TensorRead>();
    ASSERT_NE(read_small, nullptr);
    EXPECT_EQ(read_small->indices[0].type(), Int(32));
    EXPECT_TRUE(is_const_int(read_small->indices[0], 3));
}

TEST(TeCompute, SymbolicShapes) {
    Var n("n"), m("m", Int(16));
    Tensor A = placeholder({n, m}, Float(32), "A");
    EXPECT_TRUE(A.shape()[0].same_as(n));
    EXPECT_EQ(A.shape()[1].type(), Int(32));
    Tensor B = compute({n, m}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    EXPECT_TRUE(as_compute(B.op())->axis[0].dom().extent.same_as(n));
}

TEST(TeCompute, MultipleOutputs) {
    Tensor A = placeholder({6}, Float(32), "A");
    std::vector<Tensor> out = compute_multi({6}, [&](Var i) {
        return std::vector<Expr>{A(i) + 1.0f, cast(Int(32), A(i))};
    }, "two");
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].dtype(), Float(32));
    EXPECT_EQ(out[1].dtype(), Int(32));
    EXPECT_EQ(out[0].name(), "two.v0");
    EXPECT_EQ(out[1].value_index(), 1);
    EXPECT_TRUE(out[0].op().same_as(out[1].op()));
    EXPECT_EQ(op_num_outputs(out[0].op()), 2);
    EXPECT_FALSE(same_tensor(out[0], out[1]));
}

TEST(TeCompute, OpOutputIsTheSameTensor) {
    Tensor A = placeholder({2}, Float(32), "A");
    Tensor again = op_output(A.op(), 0);
    EXPECT_FALSE(again.same_as(A));  // a new handle ...
    EXPECT_TRUE(same_tensor(again, A));  // ... to the same tensor
    EXPECT_EQ(TensorHash()(again), TensorHash()(A));
    EXPECT_EQ(again.name(), "A");
    EXPECT_THROW(op_output(A.op(), 1), DSLError);
}

TEST(TeCompute, IterVarsIndexTensors) {
    Tensor A = placeholder({4, 4}, Float(32), "A");
    IterVar k = reduce_axis({0, 4}, "k");
    Tensor B = compute({4}, [&](Var i) { return sum(A(i, k), {k}); }, "B");
    const auto* r = as_compute(B.op())->body[0].as<Reduce>();
    ASSERT_NE(r, nullptr);
    const auto* read = r->source[0].as<TensorRead>();
    ASSERT_NE(read, nullptr);
    EXPECT_TRUE(read->indices[1].same_as(k.var()));
}
