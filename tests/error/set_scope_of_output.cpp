// set_scope: an output's buffer is the caller's, in global memory.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ScheduleError, SetScopeOfOutput) {
    Tensor A = placeholder({8, 8}, Float(32), "A");
    Tensor C = compute(
        {8, 8}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    expect_schedule_error([&] { s.set_scope(s.stage_of(C), StorageScope::Local); },
                          {"set_scope: stage 'C'", "is an output", "cannot be local"});
}
