// cache_write after a loop transformation of the stage.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorCacheWriteAfterSplit, Throws) {
    Tensor A = placeholder({16, 8}, Float(32), "A");
    Tensor B = compute(
        {16, 8}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Tensor C = compute(
        {16, 8}, [&](Var i, Var j) { return B(i, j) * 2.0f; }, "C");
    Schedule s = create_schedule({C});
    s.split(s.stage_of(B), 0, 4);
    expect_schedule_error(
        [&] { s.cache_write(s.stage_of(B), "local"); },
        {"cache_write", "stage 'B'", "must come before splits", "for i0.outer in range(4)"});
    EXPECT_EQ(s.steps().size(), 1u);
}
