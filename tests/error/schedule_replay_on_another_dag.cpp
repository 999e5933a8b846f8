// Replaying a recorded step list (schedule_from_json) on a DAG it was not recorded for.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorReplayOnAnotherDag, Throws) {
    Tensor A = placeholder({16, 12}, Float(32), "A");
    Tensor B = compute(
        {16, 12}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    s.split(s.stage_of(B), 0, 4);
    std::string record = s.to_json();
    // Same structure but another shape: another workload.
    Tensor A2 = placeholder({16, 13}, Float(32), "A");
    Tensor B2 = compute(
        {16, 13}, [&](Var i, Var j) { return A2(i, j) + 1.0f; }, "B");
    expect_schedule_error([&] { schedule_from_json({B2}, record); },
                          {"schedule_from_json", "recorded for workload", "cannot be replayed"});
}
