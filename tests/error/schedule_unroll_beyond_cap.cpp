// Unroll of a loop longer than the unroll cap.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorUnrollBeyondCap, Throws) {
    Tensor A = placeholder({1000}, Float(32), "A");
    Tensor B = compute(
        {1000}, [&](Var i) { return A(i) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    expect_schedule_error([&] { s.unroll(s.stage_of(B), 0); },
                          {"unroll", "stage 'B'", "'i0'", "extent 1000", "unroll cap of 512",
                           "loop nest", "for i0 in range(1000)"});
    EXPECT_TRUE(s.steps().empty());
}
