// Fuse of loops that are not adjacent.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorFuseNonAdjacent, Throws) {
    Tensor X = placeholder({4, 5, 6}, Float(32), "X");
    Tensor Y = compute(
        {4, 5, 6}, [&](Var i, Var j, Var k) { return X(i, j, k); }, "Y");
    Schedule s = create_schedule({Y});
    expect_schedule_error(
        [&] {
            s.fuse(s.stage_of(Y), {0, 2});
        },
        {"fuse", "stage 'Y'", "positions 0 and 2", "not adjacent", "loop nest",
         "for i1 in range(5)"});
    EXPECT_TRUE(s.steps().empty());
}
