// SPMD: softmax with one block per row, the row max and the row sum as cross-thread reductions
// into shared memory, exp inlined; matches the reference and is race-free.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"
#include "tessel/ir/IROperator.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::Softmax;

TEST(SpmdSoftmax, OneBlockPerRow) {
    const int n = 6, m = 40, threads = 16;
    Softmax sm(n, m);
    Schedule s = sm.block_per_row_schedule(threads);
    std::string ir = expect_matches_reference(s, m);
    EXPECT_NE(ir.find("thread_allreduce"), std::string::npos) << ir;
    std::string lowered = to_string(lower(s, {sm.X, sm.Y}));
    EXPECT_NE(lowered.find("thread_barrier"), std::string::npos) << lowered;
}
