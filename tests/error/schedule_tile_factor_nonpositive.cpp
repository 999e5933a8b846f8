// tile with a second factor <= 0: the error comes before the first split, nothing is recorded.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorTileFactorNonPositive, Throws) {
    Tensor A = placeholder({16, 12}, Float(32), "A");
    Tensor B = compute(
        {16, 12}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    int b = s.stage_of(B);
    expect_schedule_error(
        [&] { s.tile(b, 0, 1, 8, 0); },
        {"tile", "stage 'B'", "factor 0", "'i1'", "positive", "loop nest", "for i0 in range(16)"});
    EXPECT_TRUE(s.steps().empty());
    EXPECT_EQ(s.stage(b).leaf.size(), 2u);
    expect_schedule_error([&] { s.tile(b, -1, 0, 0, 4); }, {"tile", "position -1"});
}
