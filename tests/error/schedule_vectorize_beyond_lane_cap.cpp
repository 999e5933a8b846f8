// Vectorize of a loop longer than the vector lane cap.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorVectorizeBeyondLaneCap, Throws) {
    Tensor A = placeholder({4, 100}, Float(32), "A");
    Tensor B = compute(
        {4, 100}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Schedule s = create_schedule({B}, ScheduleLimits{16, 512});
    expect_schedule_error([&] { s.vectorize(s.stage_of(B), 1); },
                          {"vectorize", "stage 'B'", "'i1'", "extent 100", "lane cap of 16",
                           "factor <= 16", "loop nest", "for i1 in range(100)"});
    EXPECT_TRUE(s.steps().empty());
}
