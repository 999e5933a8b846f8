// rfactor: sum, max, min, prod and argmax factored over the outer or inner part of a split
// reduction axis, at every factor_axis, with non-dividing splits and a second reduction axis.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::Matmul;

namespace {

using ReduceFn = Expr (*)(Expr, const std::vector<IterVar>&, Expr);

Tensor row_reduce(const Tensor& X, ReduceFn f, const std::string& name) {
    IterVar k = reduce_axis({0, X.shape()[1]}, "k");
    return compute(
        {X.shape()[0]}, [&](Var i) { return f(X(i, k), {k}, Expr()); }, name);
}

}  // namespace

TEST(ScheduleRfactor, EveryBuiltinReducerBothParts) {
    ReduceFn fns[] = {sum, max, min, prod};
    for (ReduceFn f : fns)
        for (int part = 0; part < 2; ++part)
            for (int factor_axis = 0; factor_axis < 2; ++factor_axis) {
                Tensor X = placeholder({5, 30}, Float(32), "X");
                Tensor R = row_reduce(X, f, "R");
                Schedule s = create_schedule({R});
                int r = s.stage_of(R);
                s.split(r, 1, 8);  // 30 = 3*8 + 6: guarded partial results
                int rf = s.rfactor(r, 1 + part, factor_axis);
                EXPECT_EQ(rf, r);
                EXPECT_EQ(s.stage_of(R), r + 1);
                SCOPED_TRACE("part " + std::to_string(part) + " axis " +
                             std::to_string(factor_axis));
                expect_matches_reference(s, 30);
            }
}

TEST(ScheduleRfactor, GemmWithScheduledStages) {
    Matmul mm(12, 16, 64);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.split(c, 2, 16);            // i j ko ki
    int rf = s.rfactor(c, 3, 2);  // C.rf[i, j, ki] = sum over ko
    c = s.stage_of(mm.C);
    s.vectorize(rf, 2);
    s.reorder(rf, {0, 1, 3, 2});  // i j ko ki
    s.parallel(c, 0);
    expect_matches_reference(s, 64);
}

TEST(ScheduleRfactor, ArgmaxKeepsTheFirstIndex) {
    Tensor X = placeholder({4, 37}, Float(32), "X");
    IterVar k = reduce_axis({0, 37}, "k");
    std::vector<Tensor> am = compute_multi(
        {4}, [&](Var i) { return argmax(k.var(), X(i, k), {k}); }, "am");
    Schedule s = create_schedule(am);
    int a = s.stage_of(am[0]);
    s.split_nparts(a, 1, 4);
    int rf = s.rfactor(a, 1, 1);
    s.compute_at(rf, rf + 1, 0);
    expect_matches_reference(s);
}

TEST(ScheduleRfactor, SecondReductionAxisStaysAReduction) {
    Tensor X = placeholder({3, 10, 12}, Float(32), "X");
    IterVar a = reduce_axis({0, 10}, "a"), b = reduce_axis({0, 12}, "b");
    Tensor R = compute(
        {3},
        [&](Var i) {
            return sum(X(i, a, b), {a, b});
        },
        "R");
    Schedule s = create_schedule({R});
    int r = s.stage_of(R);
    s.split(r, 2, 4);  // i a b.outer b.inner
    s.rfactor(r, 2, 0);
    expect_matches_reference(s, 120);
}

TEST(ScheduleRfactor, ReductionWithConditionAndOffset) {
    Tensor X = placeholder({6, 20}, Float(32), "X");
    IterVar k = reduce_axis({3, 15}, "k");
    Tensor R = compute(
        {6}, [&](Var i) { return sum(X(i, k), {k}, k.var() % 3 != 1); }, "R");
    Schedule s = create_schedule({R});
    int r = s.stage_of(R);
    s.split(r, 1, 4);
    s.rfactor(r, 2, 1);
    expect_matches_reference(s, 20);
}
