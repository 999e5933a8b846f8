// rfactor of a reduction axis that was not split.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorRfactorNonSplitAxis, Throws) {
    Tensor X = placeholder({4, 32}, Float(32), "X");
    IterVar k = reduce_axis({0, 32}, "k");
    Tensor R = compute(
        {4}, [&](Var i) { return sum(X(i, k), {k}); }, "R");
    Schedule s = create_schedule({R});
    int r = s.stage_of(R);
    expect_schedule_error([&] { s.rfactor(r, 1, 0); },
                          {"rfactor", "stage 'R'", "iterator 'k' (position 1)",
                           "not the outer or inner part of a split root reduction axis"});
    EXPECT_TRUE(s.steps().empty());
}
