// reindex refuses what it cannot rebuild, naming why, and leaves the schedule as it was: an
// order that is not a permutation of the loops, group sizes that do not cover them, a group
// mixing data-parallel and reduction loops, reduction groups before data-parallel ones, a stage
// whose loops are already transformed, and a read under a condition (its gather would read where
// the condition guards).
#include "error/ExpectScheduleError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

namespace {

struct Product {
    Tensor A = placeholder({6, 8}, Float(32), "A");
    Tensor B = placeholder({8, 5}, Float(32), "B");
    IterVar k = reduce_axis({0, 8}, "k");
    Tensor C = compute(
        {6, 5}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
};

}  // namespace

TEST(ErrorReindexBadGroups, OrderAndSizes) {
    Product p;
    Schedule s = create_schedule({p.C});
    const int c = s.stage_of(p.C);
    expect_schedule_error(
        [&] {
            s.reindex(c, {0, 1}, {1, 1});
        },
        {"reindex", "stage 'C'", "order must list each of the stage's 3 loops"});
    expect_schedule_error(
        [&] {
            s.reindex(c, {0, 0, 2}, {1, 1, 1});
        },
        {"reindex", "order must list each"});
    expect_schedule_error(
        [&] {
            s.reindex(c, {0, 1, 2}, {1, 1});
        },
        {"reindex", "group sizes sum to 2, not to the 3 loops"});
    expect_schedule_error(
        [&] {
            s.reindex(c, {0, 1, 2}, {2, 0, 1});
        },
        {"reindex", "group sizes must be positive"});
    expect_schedule_error(
        [&] {
            s.reindex(c, {0, 2, 1}, {1, 2});
        },
        {"reindex", "group 1 mixes data-parallel and reduction loops"});
    expect_schedule_error(
        [&] {
            s.reindex(c, {2, 0, 1}, {1, 2});
        },
        {"reindex", "the data-parallel groups must come first"});
    EXPECT_TRUE(s.steps().empty());
    EXPECT_EQ(s.stages().size(), 3u);
}

TEST(ErrorReindexBadGroups, TransformedLoops) {
    Product p;
    Schedule s = create_schedule({p.C});
    const int c = s.stage_of(p.C);
    s.split(c, 0, 2);
    expect_schedule_error(
        [&] {
            s.reindex(c, {0, 1, 2, 3}, {2, 1, 1});
        },
        {"reindex", "has loop transformations already"});
    EXPECT_EQ(s.steps().size(), 1u);
}

TEST(ErrorReindexBadGroups, ReadUnderACondition) {
    Tensor A = placeholder({6, 8}, Float(32), "A");
    IterVar k = reduce_axis({0, 8}, "k");
    Tensor C = compute(
        {6},
        [&](Var i) {
            Expr inside = Expr(i) + k.var() < 8;
            return sum(if_then_else(inside, A(i, Expr(i) + k.var()), make_const(Float(32), 0.0)),
                       {k});
        },
        "C");
    Schedule s = create_schedule({C});
    expect_schedule_error(
        [&] {
            s.reindex(s.stage_of(C), {0, 1}, {1, 1});
        },
        {"reindex", "reads a tensor under a condition"});
    EXPECT_TRUE(s.steps().empty());
}

TEST(ErrorReindexBadGroups, NotAReduction) {
    Tensor A = placeholder({6, 8}, Float(32), "A");
    Tensor C = compute(
        {6, 8}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "C");
    Schedule s = create_schedule({C});
    expect_schedule_error(
        [&] {
            s.reindex(s.stage_of(C), {0, 1}, {2});
        },
        {"reindex", "is not a reduction with one output"});
}
