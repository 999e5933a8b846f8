// A vectorized if_then_else with a vector condition (the zero padding of a conv2d whose x axis is
// vectorized) loaded its true branch for every lane: lane 0 read X[-1], masked off only after the
// load. Found by the tsan leg of scripts/test.sh (JitSchedules.Conv2dPadded faulted where X began a
// mapping; elsewhere it read a float before the buffer and threw it away). if_then_else evaluates
// only the taken branch (ir/IR.h): every load in a branch of a vector if_then_else is predicated
// with the lanes that take it.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/Lower.h"

using namespace tessel;

TEST(IssueVectorizedIfThenElseReadsOutOfBounds, BranchLoadsArePredicated) {
    Tensor X = placeholder({2, 3, 9, 10}, Float(32), "X");
    Tensor W = placeholder({5, 3, 3, 3}, Float(32), "W");
    Tensor C = tessel::testing::conv2d_3x3(X, W, 1, "conv");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.tile(c, 2, 3, 4, 4);
    s.split(c, 1, 2);
    s.reorder(c, {0, 1, 3, 4, 7, 8, 2, 5, 9, 6});
    s.vectorize(c, 9);
    Stmt body = lower(s, {X, W, C}).body;
    int vector_ites = 0, unpredicated = 0;
    post_order_visit(body, [&](const IRNode* n) {
        if (n->node_type != IRNodeType::Call) return;
        const auto* call = static_cast<const Call*>(n);
        if (call->op != Intrinsic::if_then_else || !call->args[0].type().is_vector()) return;
        ++vector_ites;
        for (int branch = 1; branch <= 2; ++branch)
            post_order_visit(call->args[branch], [&](const IRNode* m) {
                if (m->node_type != IRNodeType::Load) return;
                unpredicated += !static_cast<const Load*>(m)->predicate.defined();
            });
    });
    EXPECT_GT(vector_ites, 0) << body;  // the case still vectorizes the padded access
    EXPECT_EQ(unpredicated, 0) << body;
}
