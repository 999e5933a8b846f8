// rfactor on a data-parallel axis.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorRfactorDataParallelAxis, Throws) {
    Tensor X = placeholder({4, 32}, Float(32), "X");
    IterVar k = reduce_axis({0, 32}, "k");
    Tensor R = compute(
        {4}, [&](Var i) { return sum(X(i, k), {k}); }, "R");
    Schedule s = create_schedule({R});
    int r = s.stage_of(R);
    s.split(r, 1, 8);
    expect_schedule_error([&] { s.rfactor(r, 0, 0); },
                          {"rfactor", "stage 'R'", "iterator 'i0' (position 0) is data-parallel",
                           "for k.outer in range(4)"});
    EXPECT_EQ(s.steps().size(), 1u);
    EXPECT_EQ(s.stages().size(), 2u);
}
