// cache_write into a storage scope that does not exist.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorCacheUnknownScope, Throws) {
    Tensor A = placeholder({16, 8}, Float(32), "A");
    Tensor B = compute(
        {16, 8}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Tensor C = compute(
        {16, 8}, [&](Var i, Var j) { return B(i, j) * 2.0f; }, "C");
    Schedule s = create_schedule({C});
    expect_schedule_error([&] { s.cache_write(s.stage_of(B), "texture"); },
                          {"cache_write", "stage 'B'", "unknown storage scope 'texture'",
                           "global, shared, local", "loop nest", "for i0 in range(16)"});
    EXPECT_TRUE(s.steps().empty());
}
