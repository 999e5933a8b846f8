// argmax / argmin: structure, and the combiner's semantics checked by evaluating it (with a tiny
// evaluator for the node kinds it uses) over every order of combining a list with ties and NaNs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "tessel/te/Operation.h"

using namespace tessel;

namespace {
using Env = std::unordered_map<const Variable*, double>;

// Evaluates the node kinds an argmax combiner is made of; bools are 0 / 1.
double eval(const Expr& e, const Env& env) {
    if (auto i = as_const_int(e)) return static_cast<double>(*i);
    if (auto f = as_const_float(e)) return *f;
    if (const auto* v = e.as<Variable>()) return env.at(v);
    if (const auto* n = e.as<GT>()) return eval(n->a, env) > eval(n->b, env);
    if (const auto* n = e.as<LT>()) return eval(n->a, env) < eval(n->b, env);
    if (const auto* n = e.as<EQ>()) return eval(n->a, env) == eval(n->b, env);
    if (const auto* n = e.as<And>()) return eval(n->a, env) && eval(n->b, env);
    if (const auto* n = e.as<Or>()) return eval(n->a, env) || eval(n->b, env);
    if (const auto* n = e.as<Not>()) return !eval(n->a, env);
    if (const auto* n = e.as<Select>())
        return eval(n->condition, env) ? eval(n->true_value, env) : eval(n->false_value, env);
    if (const auto* n = e.as<Call>(); n && n->op == Intrinsic::isnan)
        return std::isnan(eval(n->args[0], env));
    ADD_FAILURE() << "unexpected node " << node_type_name(e.node_type());
    return 0;
}

struct Pair {
    double index, value;
};

Pair combine(const CommReducerNode& c, Pair l, Pair r) {
    Env env{{c.lhs[0].get(), l.index}, {c.lhs[1].get(), l.value},
            {c.rhs[0].get(), r.index}, {c.rhs[1].get(), r.value}};
    return {eval(c.result[0], env), eval(c.result[1], env)};
}

CommReducer arg_combiner(bool want_max, Type value_type) {
    Tensor A = placeholder({6}, value_type, "A");
    IterVar k = reduce_axis({0, 6}, "k");
    std::vector<Expr> r = want_max ? argmax(k.var(), A(k), {k}) : argmin(k.var(), A(k), {k});
    return r[0].as<Reduce>()->combiner;
}

// Folds `values` (index = position) in every order, left to right from the identity, and also
// pairwise (a balanced tree), and checks the result is always `expected_index`.
void check_all_orders(const CommReducerNode& c, const std::vector<double>& values,
                      double expected_index) {
    Pair identity{eval(c.identity[0], {}), eval(c.identity[1], {})};
    std::vector<int> order(values.size());
    std::iota(order.begin(), order.end(), 0);
    do {
        Pair acc = identity;
        for (int i : order) acc = combine(c, acc, {double(i), values[i]});
        EXPECT_EQ(acc.index, expected_index);
        Pair left = identity, right = identity;  // two partial reductions, then merged
        for (size_t p = 0; p < order.size(); ++p) {
            Pair& part = p % 2 ? right : left;
            part = combine(c, {double(order[p]), values[order[p]]}, part);
        }
        EXPECT_EQ(combine(c, right, left).index, expected_index);
    } while (std::next_permutation(order.begin(), order.end()));
}
}  // namespace

TEST(TeArgmax, Structure) {
    Tensor A = placeholder({4, 6}, Float(32), "A");
    IterVar k = reduce_axis({0, 6}, "k");
    std::vector<Tensor> out = compute_multi({4}, [&](Var i) {
        return argmax(k.var(), A(i, k), {k});
    }, "am");
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].dtype(), Int(32));
    EXPECT_EQ(out[1].dtype(), Float(32));
    const ComputeOpNode* c = as_compute(out[0].op());
    const Reduce* r0 = c->body[0].as<Reduce>();
    const Reduce* r1 = c->body[1].as<Reduce>();
    ASSERT_TRUE(r0 && r1);
    EXPECT_TRUE(r0->combiner.same_as(r1->combiner));
    EXPECT_EQ(r0->value_index, 0);
    EXPECT_EQ(r1->value_index, 1);
    EXPECT_EQ(r0->combiner->name, "argmax");
    EXPECT_EQ(as_const_int(r0->combiner->identity[0]), std::numeric_limits<int32_t>::max());
    EXPECT_EQ(as_const_float(r0->combiner->identity[1]), -std::numeric_limits<double>::infinity());
}

TEST(TeArgmax, TiesGoToTheLowestIndexInAnyOrder) {
    CommReducer c = arg_combiner(true, Float(32));
    check_all_orders(*c, {1, 3, 2, 3, 0, 3}, 1);
    check_all_orders(*c, {-5, -5, -5, -5}, 0);
    const double inf = std::numeric_limits<double>::infinity();
    check_all_orders(*c, {-inf, -inf, -inf}, 0);  // ties with the identity's value
}

TEST(TeArgmax, FirstNaNWins) {
    CommReducer c = arg_combiner(true, Float(32));
    const double nan = std::numeric_limits<double>::quiet_NaN();
    check_all_orders(*c, {1, nan, 7, nan, 2}, 1);
    CommReducer m = arg_combiner(false, Float(32));
    check_all_orders(*m, {1, 4, nan, -3, nan}, 2);
}

TEST(TeArgmax, IntegerValues) {
    CommReducer c = arg_combiner(true, Int(32));
    EXPECT_EQ(as_const_int(c->identity[1]), std::numeric_limits<int32_t>::min());
    double lowest = std::numeric_limits<int32_t>::min();
    check_all_orders(*c, {lowest, lowest, lowest}, 0);
    check_all_orders(*c, {4, 9, 9, 1, 9}, 1);
}

TEST(TeArgmin, TiesGoToTheLowestIndexInAnyOrder) {
    CommReducer c = arg_combiner(false, Float(32));
    EXPECT_EQ(c->name, "argmin");
    EXPECT_EQ(as_const_float(c->identity[1]), std::numeric_limits<double>::infinity());
    check_all_orders(*c, {4, 2, 8, 2, 2, 5}, 1);
    const double inf = std::numeric_limits<double>::infinity();
    check_all_orders(*c, {inf, inf}, 0);
    CommReducer i = arg_combiner(false, Int(32));
    double highest = std::numeric_limits<int32_t>::max();
    check_all_orders(*i, {highest, 3, highest, 3}, 1);
}
