// ScheduleOps and the whole pipeline: inlining, reduction nests, split guards and their
// partitioning.
#include <gtest/gtest.h>

#include "tessel/ir/IRPrinter.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/Lower.h"
#include "tessel/lower/ScheduleOps.h"
#include "tessel/te/Operation.h"

namespace tessel {
namespace {

TEST(ScheduleOps, InlineSubstitutesTheProducerBody) {
    Tensor A = placeholder({16}, Float(32), "A");
    Tensor B = compute(
        {16}, [&](Var i) { return A(i) + 1.0f; }, "B");
    Tensor C = compute(
        {16}, [&](Var i) { return B(i) * B(i); }, "C");
    Schedule s = create_schedule({C});
    s.compute_inline(s.stage_of(B));
    LoweredFunc f = schedule_ops(s, {A, C}, "main");
    EXPECT_EQ(to_string(f.body),
              "for i0 in range(0, 16):\n"
              "    C[i0] = (A[i0] + 1.0f) * (A[i0] + 1.0f)\n");
}

TEST(ScheduleOps, ReductionHasInitAndUpdateNests) {
    Tensor A = placeholder({8, 4}, Float(32), "A");
    IterVar k = reduce_axis(Range(0, 4), "k");
    Tensor S = compute(
        {8}, [&](Var i) { return sum(A(i, k), {k}); }, "S");
    Schedule s = create_schedule({S});
    LoweredFunc f = schedule_ops(s, {A, S}, "main");
    EXPECT_EQ(to_string(f.body),
              "for i0 in range(0, 8):\n"
              "    S[i0] = 0.0f\n"
              "    for k in range(0, 4):\n"
              "        S[i0] = S[i0] + A[i0, k]\n");
}

// Counts FloorDiv/FloorMod nodes and guards in the innermost statements of a lowered program.
struct Census {
    int divmods = 0, ifs = 0;
};
Census census(const Stmt& s) {
    Census c;
    post_order_visit(s, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::FloorDiv || n->node_type == IRNodeType::FloorMod)
            ++c.divmods;
        if (n->node_type == IRNodeType::IfThenElse) ++c.ifs;
    });
    return c;
}

TEST(LowerPipeline, Matmul1000SplitBy32HasAGuardFreeMainBody) {
    Tensor A = placeholder({1000, 1000}, Float(32), "A");
    Tensor B = placeholder({1000, 1000}, Float(32), "B");
    IterVar k = reduce_axis(Range(0, 1000), "k");
    Tensor C = compute(
        {1000, 1000}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.tile(c, 0, 1, 32, 32);
    LoweredFunc before = schedule_ops(s, {A, B, C}, "main");
    EXPECT_GT(census(before.body).ifs, 0);  // the split guards are there before partitioning
    LowerOptions quiet;
    LoweredFunc f = lower(s, {A, B, C}, "main", quiet);
    Census after = census(f.body);
    EXPECT_EQ(after.ifs, 0) << to_string(f);      // main body and tails are guard-free
    EXPECT_EQ(after.divmods, 0) << to_string(f);  // and index arithmetic is plain
    // The main body: full 32x32 tiles over io in [0, 31) and jo in [0, 31).
    std::string ir = to_string(f);
    EXPECT_NE(ir.find("for i0.outer in range(0, 31):"), std::string::npos) << ir;
}

}  // namespace
}  // namespace tessel
