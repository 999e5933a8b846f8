// cache_read for a reader that does not read the tensor.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorCacheReadNonReader, Throws) {
    Tensor A = placeholder({16, 8}, Float(32), "A");
    Tensor B = compute(
        {16, 8}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Tensor C = compute(
        {16, 8}, [&](Var i, Var j) { return B(i, j) * 2.0f; }, "C");
    Schedule s = create_schedule({C});
    expect_schedule_error(
        [&] { s.cache_read(s.stage_of(A), "shared", {s.stage_of(C)}); },
        {"cache_read", "stage 'A'", "reader 'C' (stage 2) does not read 'A'", "readers: 1 ('B')"});
    EXPECT_TRUE(s.steps().empty());
    EXPECT_EQ(s.stages().size(), 3u);
}
