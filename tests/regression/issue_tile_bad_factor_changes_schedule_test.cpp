// Found by the schedule fuzzer: tile() with a valid first factor and an invalid second one
// applied the first split before throwing ScheduleError, so a rejected tile changed the
// schedule (and the searcher's state). A failed primitive must leave the schedule unchanged.
#include <gtest/gtest.h>

#include "tessel/Error.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;

TEST(Regression, TileWithBadSecondFactorChangesNothing) {
    Tensor A = placeholder({13, 11}, Float(32), "A");
    Tensor B = compute(
        {13, 11}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "B");
    Schedule s = create_schedule({B});
    int b = s.stage_of(B);
    EXPECT_THROW(s.tile(b, 0, 1, 4, 0), ScheduleError);
    EXPECT_THROW(s.tile(b, 0, 1, -1, 4), ScheduleError);
    EXPECT_TRUE(s.steps().empty());
    EXPECT_EQ(s.stage(b).leaf.size(), 2u);
    EXPECT_EQ(s.stage(b).iters.size(), 2u);
}
