// Reorder with the positions of another (deeper) stage's nest.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorReorderOtherStageAxes, Throws) {
    Tensor A = placeholder({16, 12}, Float(32), "A");
    Tensor B = compute(
        {16, 12}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Tensor C = compute(
        {12}, [&](Var j) { return B(3, j); }, "C");
    Schedule s = create_schedule({C});
    int b = s.stage_of(B), c = s.stage_of(C);
    s.split(b, 0, 4);  // B has leaves 0..2; C only 0
    expect_schedule_error(
        [&] { s.reorder(c, {2}); },
        {"reorder", "stage 'C'", "position 2 is not a leaf", "loop nest", "for i0 in range(12)"});
    expect_schedule_error(
        [&] {
            s.reorder(c, {0, 1, 2});
        },
        {"reorder", "stage 'C'", "3 positions"});
    EXPECT_EQ(s.steps().size(), 1u);
}
