// Step lists whose JSON is malformed or misses fields.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Step.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorMalformedStepJson, Throws) {
    expect_schedule_error([] { steps_from_json("[{\"kind\": \"split\", "); },
                          {"steps_from_json", "malformed JSON"});
    expect_schedule_error([] { steps_from_json("[{\"kind\": \"split\", \"stage\": 1}]"); },
                          {"step 0", "missing field 'iter'"});
    expect_schedule_error(
        [] { steps_from_json("[{\"kind\": \"fuse\", \"stage\": 1, \"iters\": \"0,1\"}]"); },
        {"step 0", "field 'iters'", "wrong type"});
    expect_schedule_error([] { steps_from_json("[{\"kind\": \"rfactorize\", \"stage\": 0}]"); },
                          {"step 0", "unknown step kind 'rfactorize'"});
    expect_schedule_error([] { steps_from_json("{\"kind\": \"split\"}"); }, {"JSON array"});
}
