// Compute_at of a stage at itself (the smallest cycle).
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorComputeAtItself, Throws) {
    Tensor A = placeholder({16, 12}, Float(32), "A");
    Tensor B = compute(
        {16, 12}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Tensor C = compute(
        {16, 12}, [&](Var i, Var j) { return B(i, j) * 2.0f; }, "C");
    Schedule s = create_schedule({C});
    int b = s.stage_of(B), c = s.stage_of(C);
    expect_schedule_error([&] { s.compute_at(b, b, 0); }, {"compute_at", "stage 'B'", "at itself",
                                                           "loop nest", "for i0 in range(16)"});
    EXPECT_TRUE(s.steps().empty());
    (void)c;
}
