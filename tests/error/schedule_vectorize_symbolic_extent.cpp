// Vectorize of a loop whose extent is symbolic.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorVectorizeSymbolicExtent, Throws) {
    Var n("n");
    Tensor A = placeholder({n, 8}, Float(32), "A");
    Tensor B = compute(
        {n, 8}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    expect_schedule_error([&] { s.vectorize(s.stage_of(B), 0); },
                          {"vectorize", "stage 'B'", "'i0'", "non-constant extent n",
                           "split it by a constant factor", "loop nest", "for i0 in range(n)"});
    EXPECT_TRUE(s.steps().empty());
}
