// shift_inwards on a stage with a reduction: recomputed points would be accumulated twice when a
// reduction loop is outside the split (it used to give wrong results silently).
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorSplitShiftInwardsInReduction, Throws) {
    Tensor A = placeholder({3, 5}, Float(32), "A");
    Tensor B = placeholder({5, 13}, Float(32), "B");
    IterVar k = reduce_axis({0, 5}, "k");
    Tensor C = compute(
        {3, 13}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Schedule s = create_schedule({C});
    expect_schedule_error([&] { s.split(s.stage_of(C), 1, 4, TailStrategy::ShiftInwards); },
                          {"split", "stage 'C'", "shift_inwards", "'i1'", "twice", "use guard",
                           "loop nest", "for k in range(5)  # reduce"});
    EXPECT_TRUE(s.steps().empty());
}
