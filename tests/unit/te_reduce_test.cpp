// Reductions: the built-in reducers' combiners and identities, user reducers, argmax / argmin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "tessel/te/Operation.h"

using namespace tessel;

namespace {
// The Reduce at the top of a compute's (first) body.
const Reduce* top_reduce(const Tensor& t) {
    const ComputeOpNode* c = as_compute(t.op());
    return c ? c->body[t.value_index()].as<Reduce>() : nullptr;
}

// The combiner of `r` applied to lhs=x and rhs=y: checks the result is `Node(x, y)`.
template <typename Node>
void expect_binary_combiner(const Reduce* r) {
    ASSERT_NE(r, nullptr);
    const CommReducerNode& c = *r->combiner;
    ASSERT_EQ(c.result.size(), 1u);
    const Node* n = c.result[0].as<Node>();
    ASSERT_NE(n, nullptr) << "combiner is a " << node_type_name(c.result[0].node_type());
    EXPECT_TRUE(n->a.same_as(c.lhs[0]));
    EXPECT_TRUE(n->b.same_as(c.rhs[0]));
    EXPECT_EQ(c.lhs[0].type(), r->source[0].type());
}

Tensor reduce_rows(Type t, Expr (*reducer)(Expr, const std::vector<IterVar>&, Expr)) {
    Tensor A = placeholder({3, 5}, t, "A");
    IterVar k = reduce_axis({0, 5}, "k");
    return compute({3}, [&](Var i) { return reducer(A(i, k), {k}, Expr()); }, "R");
}
}  // namespace

TEST(TeReduce, SumStructure) {
    for (Type t : {Float(32), Int(32)}) {
        Tensor R = reduce_rows(t, sum);
        const Reduce* r = top_reduce(R);
        expect_binary_combiner<Add>(r);
        EXPECT_EQ(r->combiner->name, "sum");
        EXPECT_EQ(r->type, t);
        EXPECT_EQ(r->combiner->identity[0].type(), t);
        EXPECT_TRUE(t.is_float() ? as_const_float(r->combiner->identity[0]) == 0.0
                                 : is_zero(r->combiner->identity[0]));
        EXPECT_TRUE(is_one(r->condition) || r->condition.type() == Bool());
        ASSERT_EQ(r->axis.size(), 1u);
        const ComputeOpNode* c = as_compute(R.op());
        ASSERT_EQ(c->reduce_axis.size(), 1u);
        EXPECT_TRUE(c->reduce_axis[0].same_as(r->axis[0]));
    }
}

TEST(TeReduce, ProdStructure) {
    for (Type t : {Float(32), Int(32)}) {
        Tensor R = reduce_rows(t, prod);
        const Reduce* r = top_reduce(R);
        expect_binary_combiner<Mul>(r);
        Expr id = r->combiner->identity[0];
        EXPECT_TRUE(t.is_float() ? as_const_float(id) == 1.0 : is_one(id));
    }
}

TEST(TeReduce, MaxAndMinStructure) {
    const double inf = std::numeric_limits<double>::infinity();
    Tensor tfmax = reduce_rows(Float(32), max), timax = reduce_rows(Int(32), max);
    Tensor tfmin = reduce_rows(Float(32), min), timin = reduce_rows(Int(32), min);
    const Reduce* fmax = top_reduce(tfmax);
    expect_binary_combiner<Max>(fmax);
    EXPECT_EQ(as_const_float(fmax->combiner->identity[0]), -inf);
    const Reduce* imax = top_reduce(timax);
    expect_binary_combiner<Max>(imax);
    EXPECT_EQ(as_const_int(imax->combiner->identity[0]), std::numeric_limits<int32_t>::min());
    const Reduce* fmin = top_reduce(tfmin);
    expect_binary_combiner<Min>(fmin);
    EXPECT_EQ(as_const_float(fmin->combiner->identity[0]), inf);
    const Reduce* imin = top_reduce(timin);
    expect_binary_combiner<Min>(imin);
    EXPECT_EQ(as_const_int(imin->combiner->identity[0]), std::numeric_limits<int32_t>::max());
}

TEST(TeReduce, EachUseHasFreshCombinerVariables) {
    Tensor A = placeholder({4}, Float(32), "A");
    IterVar k = reduce_axis({0, 4}, "k");
    Expr s1 = sum(A(k), {k}), s2 = sum(A(k), {k});
    EXPECT_FALSE(s1.as<Reduce>()->combiner->lhs[0].same_as(s2.as<Reduce>()->combiner->lhs[0]));
}

TEST(TeReduce, ConditionAndMultipleAxes) {
    Tensor A = placeholder({8, 8}, Float(32), "A");
    IterVar r = reduce_axis({0, 8}, "r"), s = reduce_axis({0, 8}, "s");
    Tensor T = compute({1}, [&](Var) { return sum(A(r, s), {r, s}, r.var() < s.var()); }, "upper");
    const Reduce* red = top_reduce(T);
    ASSERT_NE(red, nullptr);
    EXPECT_EQ(red->axis.size(), 2u);
    EXPECT_NE(red->condition.as<LT>(), nullptr);
    EXPECT_EQ(as_compute(T.op())->reduce_axis.size(), 2u);
}

TEST(TeReduce, ReduceAxisDtypeAndDomain) {
    IterVar k = reduce_axis({2, 10}, "k");
    EXPECT_EQ(k.kind(), IterVarKind::Reduce);
    EXPECT_EQ(k.var().name(), "k");
    EXPECT_EQ(k.var().type(), Int(32));
    EXPECT_TRUE(is_const_int(k.dom().min, 2));
    EXPECT_TRUE(is_const_int(k.dom().extent, 10));
    IterVar big = reduce_axis({0, int64_t(1) << 40}, "big");
    EXPECT_EQ(big.var().type(), Int(64));
    EXPECT_EQ(big.dom().min.type(), Int(64));
    Var n("n", Int(64));
    EXPECT_EQ(reduce_axis({0, n}, "sym").var().type(), Int(64));
}

TEST(TeReduce, UserReducer) {
    // Sum of squares' companion: a reducer keeping the value of largest magnitude.
    Reducer absmax = comm_reducer(
        "absmax",
        [](const std::vector<Expr>& l, const std::vector<Expr>& r) {
            return std::vector<Expr>{select(abs(r[0]) > abs(l[0]), r[0], l[0])};
        },
        [](const std::vector<Type>& t) { return std::vector<Expr>{make_zero(t[0])}; });
    EXPECT_EQ(absmax.name(), "absmax");
    Tensor A = placeholder({3, 5}, Float(32), "A");
    IterVar k = reduce_axis({0, 5}, "k");
    Tensor R = compute({3}, [&](Var i) { return absmax(A(i, k), {k}); }, "R");
    const Reduce* r = top_reduce(R);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->combiner->name, "absmax");
    EXPECT_NE(r->combiner->result[0].as<Select>(), nullptr);
    EXPECT_EQ(r->combiner->lhs[0].type(), Float(32));
}

TEST(TeReduce, UserReducerLiteralsAdaptToTheSourceType) {
    Reducer count_pos = comm_reducer(
        "sum_int_literal_identity",
        [](const std::vector<Expr>& l, const std::vector<Expr>& r) {
            return std::vector<Expr>{l[0] + r[0]};
        },
        [](const std::vector<Type>&) { return std::vector<Expr>{Expr(0)}; });
    Tensor A = placeholder({5}, Float(64), "A");
    IterVar k = reduce_axis({0, 5}, "k");
    Expr e = count_pos(A(k), {k});
    EXPECT_EQ(e.as<Reduce>()->combiner->identity[0].type(), Float(64));
}

TEST(TeReduce, TwoValueUserReducer) {
    // (sum, count) pairs, e.g. for a mean.
    Reducer sum_count = comm_reducer(
        "sum_count",
        [](const std::vector<Expr>& l, const std::vector<Expr>& r) {
            return std::vector<Expr>{l[0] + r[0], l[1] + r[1]};
        },
        [](const std::vector<Type>& t) {
            return std::vector<Expr>{make_zero(t[0]), make_zero(t[1])};
        });
    Tensor A = placeholder({4, 6}, Float(32), "A");
    IterVar k = reduce_axis({0, 6}, "k");
    std::vector<Tensor> out = compute_multi({4}, [&](Var i) {
        return sum_count({A(i, k), Expr(1)}, {k});
    }, "stats");
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].dtype(), Float(32));
    EXPECT_EQ(out[1].dtype(), Int(32));
    EXPECT_EQ(top_reduce(out[1])->value_index, 1);
}
