// cache_read of an inlined stage: it has no storage.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorCacheReadInlined, Throws) {
    Tensor A = placeholder({16, 8}, Float(32), "A");
    Tensor B = compute(
        {16, 8}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Tensor C = compute(
        {16, 8}, [&](Var i, Var j) { return B(i, j) * 2.0f; }, "C");
    Schedule s = create_schedule({C});
    s.compute_inline(s.stage_of(B));
    expect_schedule_error([&] { s.cache_read(s.stage_of(B), "shared", {s.stage_of(C)}); },
                          {"cache_read", "stage 'B'", "is inlined", "compute_root it first"});
    EXPECT_EQ(s.steps().size(), 1u);
}
