// reorder of a target's loops that would put a reader's attach loop outside a producer's attach
// loop (the producer would be computed inside a loop its reader runs outside of).
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorReorderBreaksAttachment, Throws) {
    Tensor A = placeholder({8, 8}, Float(32), "A");
    Tensor P = compute(
        {8, 8}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "P");
    Tensor B = compute(
        {8, 8}, [&](Var i, Var j) { return P(i, j) * 2.0f; }, "B");
    Tensor C = compute(
        {8, 8}, [&](Var i, Var j) { return B(i, j) + P(i, j); }, "C");
    Schedule s = create_schedule({C});
    int p = s.stage_of(P), b = s.stage_of(B), c = s.stage_of(C);
    s.compute_at(b, c, 1);  // B inside C's j loop
    s.compute_at(p, c, 0);  // P inside C's i loop: its reader B (in j, inside i) is there
    // Swapping i and j would put B's loop (j) outside P's (i).
    expect_schedule_error(
        [&] {
            s.reorder(c, {1, 0});
        },
        {"reorder", "stage 'C'", "'P' is computed at 'C'", "its reader 'B'", "loop nest"});
    EXPECT_EQ(s.steps().size(), 2u);  // the failed reorder changed nothing
    EXPECT_EQ(s.stage(c).iters[s.stage(c).leaf[0]].name, "i0");
}
