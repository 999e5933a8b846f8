// Compute_at to an iterator position the target does not have.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorComputeAtAxisOfAnotherStage, Throws) {
    Tensor A = placeholder({16, 12}, Float(32), "A");
    Tensor B = compute(
        {16, 12}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Tensor C = compute(
        {16, 12}, [&](Var i, Var j) { return B(i, j) * 2.0f; }, "C");
    Schedule s = create_schedule({C});
    int b = s.stage_of(B), c = s.stage_of(C);
    s.split(b, 0, 4);  // B has leaves 0..2, C only 0..1
    expect_schedule_error([&] { s.compute_at(b, c, 2); },
                          {"compute_at", "'B'", "stage 'C'", "position 2", "0..1", "loop nest",
                           "for i1 in range(12)"});
    EXPECT_EQ(s.steps().size(), 1u);
    EXPECT_EQ(s.stage(b).attach, AttachKind::Root);
}
