// LowerOptions::stop_after naming no pass of the pipeline: a ScheduleError listing the passes.
#include "error/ExpectScheduleError.h"
#include "tessel/lower/Lower.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ScheduleError, LowerStopAfterUnknownPass) {
    Tensor A = placeholder({8}, Float(32), "A");
    Tensor B = compute(
        {8}, [&](Var i) { return A(i) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    LowerOptions o;
    o.stop_after = "flatten_storage";
    expect_schedule_error(
        [&] {
            lower(s, {A, B}, Target("llvm"), "main", o);
        },
        {"unknown pass 'flatten_storage'", "partition_loops", "storage_flatten", "verify_lowered"});
    // The GPU pipeline lists its split too.
    expect_schedule_error(
        [&] {
            lower(s, {A, B}, Target("cuda -arch=sm_90"), "main", o);
        },
        {"split_host_device"});
}
