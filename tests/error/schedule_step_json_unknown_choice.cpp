// A step whose named value (an annotation, a tail strategy) is not one of the legal ones: the
// message lists them.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Step.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorStepJsonUnknownChoice, Throws) {
    expect_schedule_error(
        [] {
            steps_from_json(
                R"([{"kind":"annotate","stage":1,"iter":0,"annotation":"threadIdx.w"}])");
        },
        {"step 0", "unknown annotation 'threadIdx.w'", "vectorize", "threadIdx.x"});
    expect_schedule_error(
        [] {
            steps_from_json(
                R"([{"kind":"split","stage":1,"iter":0,"factor":4,"tail":"sideways"}])");
        },
        {"step 0", "unknown tail 'sideways'", "guard, shift_inwards, round_up"});
    expect_schedule_error([] { steps_from_json(R"([{"kind":"tile","stage":0}])"); },
                          {"unknown step kind 'tile'", "split", "rfactor"});
}
