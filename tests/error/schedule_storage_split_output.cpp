// storage_split of an output: the caller owns its buffer.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorStorageSplitOutput, Throws) {
    Tensor A = placeholder({16, 8}, Float(32), "A");
    Tensor B = compute(
        {16, 8}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Tensor C = compute(
        {16, 8}, [&](Var i, Var j) { return B(i, j) * 2.0f; }, "C");
    Schedule s = create_schedule({C});
    expect_schedule_error([&] { s.storage_split(s.stage_of(C), 1, 4); },
                          {"storage_split", "stage 'C'", "is an output", "cache_write it"});
    EXPECT_TRUE(s.steps().empty());
}
