// rfactor with a factor_axis past the new stage's axes.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorRfactorBadFactorAxis, Throws) {
    Tensor X = placeholder({4, 32}, Float(32), "X");
    IterVar k = reduce_axis({0, 32}, "k");
    Tensor R = compute(
        {4}, [&](Var i) { return sum(X(i, k), {k}); }, "R");
    Schedule s = create_schedule({R});
    int r = s.stage_of(R);
    s.split(r, 1, 8);
    expect_schedule_error([&] { s.rfactor(r, 2, 2); },
                          {"rfactor", "stage 'R'", "factor_axis 2 must be in [0, 1]"});
    EXPECT_EQ(s.steps().size(), 1u);
}
