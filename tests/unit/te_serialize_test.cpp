// DAGs written as JSON and read back are the same computation (te/Serialize.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "SerializeTestUtil.h"
#include "tessel/ir/IROperator.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_round_trip;

namespace {

TensorDAG matmul_relu(int n, int m, int k_extent) {
    Tensor A = placeholder({n, k_extent}, Float(32), "A");
    Tensor B = placeholder({k_extent, m}, Float(32), "B");
    IterVar k = reduce_axis({0, k_extent}, "k");
    Tensor C = compute(
        {n, m}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Tensor R = compute(
        {n, m}, [&](Var i, Var j) { return max(C(i, j), 0.0f); }, "relu");
    return {{A, B}, {R}};
}

}  // namespace

TEST(Serialize, MatmulReluRoundTripsAndLowersTheSame) {
    // Stages: A, B, C, relu.
    expect_round_trip(matmul_relu(16, 12, 8), [](Schedule& s) {
        s.tile(2, 0, 1, 4, 4);
        s.split(3, 1, 5);
        s.vectorize(3, 2);
    });
}

TEST(Serialize, FormatFieldsAndDeterminism) {
    std::string a = dag_to_json(matmul_relu(4, 4, 4));
    std::string b = dag_to_json(matmul_relu(4, 4, 4));  // new variables, same bytes
    EXPECT_EQ(a, b);
    nlohmann::json j = nlohmann::json::parse(a);
    EXPECT_EQ(j["format"], "tessel.dag");
    EXPECT_EQ(j["version"], kDagJsonVersion);
    EXPECT_EQ(j["ops"].size(), 4u);
    EXPECT_EQ(j["inputs"], nlohmann::json::parse("[0, 1]"));
    EXPECT_EQ(j["outputs"], nlohmann::json::parse("[[3, 0]]"));
    EXPECT_EQ(j["ops"][2]["reduce_axis"][0]["name"], "k");
    EXPECT_EQ(j["ops"][2]["body"][0]["node"], "Reduce");
    // Pretty-printing changes only the layout.
    EXPECT_EQ(nlohmann::json::parse(dag_to_json(matmul_relu(4, 4, 4), 2)), j);
}

TEST(Serialize, InputOrderIsKept) {
    TensorDAG dag = matmul_relu(4, 5, 6);
    std::swap(dag.inputs[0], dag.inputs[1]);
    TensorDAG copy = expect_round_trip(dag);
    EXPECT_EQ(copy.inputs[0].name(), "B");
    EXPECT_EQ(copy.inputs[1].name(), "A");
}

TEST(Serialize, SoftmaxWithMaxIdentityRoundTrips) {
    Tensor X = placeholder({5, 13}, Float(32), "X");
    IterVar k1 = reduce_axis({0, 13}, "k1"), k2 = reduce_axis({0, 13}, "k2");
    Tensor mx = compute(
        {5}, [&](Var i) { return max(X(i, k1), {k1}); }, "row_max");  // identity -inf
    Tensor e = compute(
        {5, 13}, [&](Var i, Var j) { return exp(X(i, j) - mx(i)); }, "exp");
    Tensor s = compute(
        {5}, [&](Var i) { return sum(e(i, k2), {k2}); }, "row_sum");
    Tensor out = compute(
        {5, 13}, [&](Var i, Var j) { return e(i, j) / s(i); }, "softmax");
    expect_round_trip(make_tensor_dag({out}), [](Schedule& s) { s.split(4, 1, 4); });
}

TEST(Serialize, ArgmaxTwoOutputsOfOneReduction) {
    Tensor X = placeholder({7, 12}, Float(32), "X");
    IterVar k = reduce_axis({0, 12}, "k");
    std::vector<Tensor> r = compute_multi(
        {7}, [&](Var i) { return argmax(k.var(), X(i, k), {k}); }, "argmax");
    TensorDAG copy = expect_round_trip({{X}, {r[0], r[1]}}, [](Schedule& s) { s.split(1, 0, 3); });
    EXPECT_EQ(copy.outputs[1].value_index(), 1);
}

TEST(Serialize, Conv2dWithPaddingStageRoundTrips) {
    Tensor X = placeholder({1, 3, 8, 8}, Float(32), "X");
    Tensor W = placeholder({4, 3, 3, 3}, Float(32), "W");
    Tensor P = compute(
        {1, 3, 10, 10},
        [&](Var b, Var c, Var y, Var x) {
            Expr inside = y >= 1 && y < 9 && x >= 1 && x < 9;
            return if_then_else(inside, X(b, c, y - 1, x - 1), make_zero(Float(32)));
        },
        "pad");
    IterVar rc = reduce_axis({0, 3}, "rc"), ry = reduce_axis({0, 3}, "ry"),
            rx = reduce_axis({0, 3}, "rx");
    Tensor C = compute(
        {1, 4, 8, 8},
        [&](Var b, Var f, Var y, Var x) {
            return sum(P(b, rc, y + ry.var(), x + rx.var()) * W(f, rc, ry, rx), {rc, ry, rx});
        },
        "conv");
    expect_round_trip(make_tensor_dag({C}), [](Schedule& s) {
        s.compute_inline(1);  // stages: X, pad, W, conv
        s.tile(3, 2, 3, 4, 4);
    });
}

TEST(Serialize, EveryScalarNodeKindRoundTrips) {
    Tensor A = placeholder({6}, Float(16), "A");
    Tensor I = placeholder({6}, Int(8), "I");
    Tensor U = placeholder({6}, UInt(64), "U");
    Tensor R = compute(
        {6},
        [&](Var i) {
            Expr f = cast(Float(32), A(i));
            Expr u = U(i) * Expr(UIntImm::make(UInt(64), 18446744073709551615ull));
            Expr n = cast(Float(32), truncdiv(cast(Int(32), I(i)), 3) + truncmod(i, 4) +
                                         floordiv(i, 2) - floormod(i, 5));
            Expr logic = !(i < 2 || i >= 5) && i != 3 && i == i && i <= 4 && i > -1;
            Expr calls = fma(f, sqrt(abs(f) + 1.0f), pow(f, 2.0f)) + tanh(f) + sigmoid(f) +
                         floor(f) + erf(f) + cast(Float(32), isnan(f));
            Expr v = select(logic, calls, min(f, n) / max(f, n + 1.5f));
            Var t("t", Float(32));
            Expr l = Let::make(t, v, t * t + cast(Float(32), u) * 0.0f);
            return if_then_else(cast(Bool(), I(i)), l, make_const(Float(32), 1e30));
        },
        "all_nodes");
    Tensor S = compute(
        {6}, [&](Var i) { return cast(Float(64), R(i)) + 1.0 / 3.0; }, "f64");
    expect_round_trip(make_tensor_dag({S}), [](Schedule& s) { s.split(4, 0, 4); });
}

TEST(Serialize, UserReducerWithConditionRoundTrips) {
    Tensor A = placeholder({9, 10}, Int(32), "A");
    Reducer bit_or = comm_reducer(
        "or_sum",
        [](const std::vector<Expr>& l, const std::vector<Expr>& r) {
            return std::vector<Expr>{select(l[0] > r[0], l[0], r[0]) + 0 * r[0]};
        },
        [](const std::vector<Type>& t) { return std::vector<Expr>{min_value(t[0])}; });
    IterVar k = reduce_axis({1, 8}, "k");
    Tensor B = compute(
        {9}, [&](Var i) { return bit_or(A(i, k), {k}, k.var() % 2 == 0); }, "B");
    expect_round_trip(make_tensor_dag({B}), [](Schedule& s) { s.split(1, 1, 3); });
}

TEST(Serialize, SymbolicShapesRoundTrip) {
    Var n("n"), m("m");
    Tensor A = placeholder({n, m}, Float(32), "A");
    IterVar k = reduce_axis({0, m}, "k");
    Tensor S = compute(
        {n}, [&](Var i) { return sum(A(i, k), {k}); }, "S");
    Tensor T = compute(
        {n, m}, [&](Var i, Var j) { return A(i, j) / S(i); }, "T");
    TensorDAG copy = expect_round_trip(make_tensor_dag({T}), {}, {{3, 5}});
    nlohmann::json j = nlohmann::json::parse(dag_to_json(copy));
    EXPECT_EQ(j["vars"].size(), 2u);
    EXPECT_EQ(j["vars"][0]["name"], "n");
    // One variable shared by all operations, as in the original.
    const auto* p = as_placeholder(copy.inputs[0].op());
    EXPECT_TRUE(p->shape[0].same_as(as_compute(copy.outputs[0].op())->axis[0].dom().extent));
}

TEST(Serialize, Int64IndexDtypeRoundTrips) {
    Var n("n", Int(64));
    Tensor A = placeholder({n}, Float(32), "A");
    Tensor B = compute(
        {n}, [&](Var i) { return A(i) * 2.0f; }, "B");
    expect_round_trip(make_tensor_dag({B}), {}, {{4}});
}

TEST(Serialize, NonFiniteConstantsRoundTrip) {
    Tensor A = placeholder({3}, Float(64), "A");
    Tensor B = compute(
        {3},
        [&](Var i) {
            Expr nan = make_const(Float(64), std::nan(""));
            Expr negative = select(A(i) < -0.5, -inf_value(Float(64)), nan);
            return select(A(i) > 0.5, inf_value(Float(64)), negative);
        },
        "B");
    std::string text = dag_to_json(std::vector<Tensor>{B});
    EXPECT_NE(text.find("\"-inf\""), std::string::npos);
    EXPECT_NE(text.find("\"nan\""), std::string::npos);
    expect_round_trip(make_tensor_dag({B}));
}

TEST(Serialize, LongChainRoundTrips) {
    Tensor prev = placeholder({4}, Float(32), "X");
    TensorDAG dag;
    dag.inputs = {prev};
    for (int s = 0; s < 200; ++s) {
        Tensor p = prev;
        prev = compute(
            {4}, [&](Var i) { return p(i) * 0.5f + 1.0f; }, "s" + std::to_string(s));
    }
    dag.outputs = {prev};
    expect_round_trip(dag);
}
