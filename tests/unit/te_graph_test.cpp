// The operation DAG: op_inputs order, topo_order, flop counts.
#include <gtest/gtest.h>

#include "tessel/te/Operation.h"

using namespace tessel;

namespace {
std::vector<std::string> names(const std::vector<Operation>& ops) {
    std::vector<std::string> out;
    for (const Operation& op : ops) out.push_back(op->name);
    return out;
}
std::vector<std::string> names(const std::vector<Tensor>& ts) {
    std::vector<std::string> out;
    for (const Tensor& t : ts) out.push_back(t.name());
    return out;
}
}  // namespace

TEST(TeGraph, OpInputsInFirstReadOrderWithoutRepeats) {
    Tensor A = placeholder({4}, Float(32), "A");
    Tensor B = placeholder({4}, Float(32), "B");
    Tensor C = placeholder({4}, Float(32), "C");
    Tensor D = compute({4}, [&](Var i) { return B(i) * A(i) + B(i) + C(i) * A(i); }, "D");
    EXPECT_EQ(names(op_inputs(D.op())), (std::vector<std::string>{"B", "A", "C"}));
    // An index read is evaluated before the read it indexes.
    Tensor I = placeholder({4}, Int(32), "I");
    Tensor G = compute({4}, [&](Var i) { return A(I(i)); }, "G");
    EXPECT_EQ(names(op_inputs(G.op())), (std::vector<std::string>{"I", "A"}));
    EXPECT_TRUE(op_inputs(A.op()).empty());
}

TEST(TeGraph, TopoOrderOfADiamond) {
    //      A
    //     / \.
    //    B   C
    //     \ /
    //      D
    Tensor A = placeholder({8}, Float(32), "A");
    Tensor B = compute({8}, [&](Var i) { return A(i) + 1.0f; }, "B");
    Tensor C = compute({8}, [&](Var i) { return A(i) * 2.0f; }, "C");
    Tensor D = compute({8}, [&](Var i) { return C(i) - B(i); }, "D");
    EXPECT_EQ(names(topo_order({D})), (std::vector<std::string>{"A", "C", "B", "D"}));
    // Deterministic, and each operation once even when listed several times.
    EXPECT_EQ(names(topo_order({D, B, D})), (std::vector<std::string>{"A", "C", "B", "D"}));
    EXPECT_EQ(names(topo_order({B, C})), (std::vector<std::string>{"A", "B", "C"}));
    EXPECT_EQ(names(topo_order({A})), (std::vector<std::string>{"A"}));
}

TEST(TeGraph, TopoOrderOfMultiOutputOps) {
    Tensor A = placeholder({3, 4}, Float(32), "A");
    IterVar k = reduce_axis({0, 4}, "k");
    std::vector<Tensor> am = compute_multi({3}, [&](Var i) {
        return argmax(k.var(), A(i, k), {k});
    }, "am");
    Tensor use = compute({3}, [&](Var i) { return cast(Float(32), am[0](i)) + am[1](i); }, "use");
    std::vector<Operation> order = topo_order({use, am[1]});
    EXPECT_EQ(names(order), (std::vector<std::string>{"A", "am", "use"}));
    EXPECT_EQ(names(op_inputs(use.op())), (std::vector<std::string>{"am.v0", "am.v1"}));
}

TEST(TeGraph, TopoOrderOfALongChainDoesNotRecurse) {
    Tensor t = placeholder({2}, Float(32), "in");
    for (int i = 0; i < 3000; ++i)
        t = compute({2}, [&](Var j) { return t(j) + 1.0f; }, "c" + std::to_string(i));
    std::vector<Operation> order = topo_order({t});
    ASSERT_EQ(order.size(), 3001u);
    EXPECT_EQ(order.front()->name, "in");
    EXPECT_EQ(order.back()->name, "c2999");
}

TEST(TeFlops, Matmul) {
    const int n = 64, m = 32, k = 16;
    Tensor A = placeholder({n, k}, Float(32), "A");
    Tensor B = placeholder({k, m}, Float(32), "B");
    IterVar kk = reduce_axis({0, k}, "k");
    Tensor C = compute({n, m}, [&](Var i, Var j) { return sum(A(i, kk) * B(kk, j), {kk}); }, "C");
    EXPECT_EQ(flop_count(C.op()), double(n) * m * k * 2);
    EXPECT_EQ(flop_count(A.op()), 0);
    EXPECT_EQ(flop_count({C}), double(n) * m * k * 2);
}

TEST(TeFlops, ElementwiseIntrinsicsAndIndexArithmetic) {
    Tensor A = placeholder({10, 20}, Float(32), "A");
    // exp 1, fma 2, * 1; the index arithmetic (j + 1) % 20 counts nothing, nor do the compare,
    // the select and the cast.
    Tensor B = compute({10, 20}, [&](Var i, Var j) {
        Expr x = A(i, (j + 1) % 20);
        return select(x > 0.0f, fma(exp(x), x, x) * x, cast(Float(32), i));
    }, "B");
    EXPECT_EQ(flop_count(B.op()), 10.0 * 20 * 4);
    Tensor C = compute({10, 20}, [&](Var i, Var j) { return B(i, j) + A(i, j); }, "C");
    EXPECT_EQ(flop_count({C}), 10.0 * 20 * 4 + 10.0 * 20);
}

TEST(TeFlops, ReductionsCountTheirCombiner) {
    Tensor A = placeholder({8, 8}, Float(32), "A");
    IterVar k = reduce_axis({0, 8}, "k");
    Tensor M = compute({8}, [&](Var i) { return max(A(i, k), {k}); }, "M");
    EXPECT_EQ(flop_count(M.op()), 8.0 * 8);
    // argmax: comparisons and selects only; two outputs, one reduction.
    IterVar r = reduce_axis({0, 8}, "r");
    std::vector<Tensor> am = compute_multi({8}, [&](Var i) {
        return argmax(r.var(), A(i, r) * 2.0f, {r});
    }, "am");
    EXPECT_EQ(flop_count(am[0].op()), 8.0 * 8 * 1);
}

TEST(TeFlops, SymbolicShapesAreAnError) {
    Var n("n");
    Tensor A = placeholder({n}, Float(32), "A");
    Tensor B = compute({n}, [&](Var i) { return A(i) + 1.0f; }, "B");
    try {
        flop_count(B.op());
        FAIL() << "expected DSLError";
    } catch (const DSLError& e) {
        EXPECT_NE(std::string(e.what()).find("'B'"), std::string::npos) << e.what();
    }
}
