// Compute_at to a stage that does not read the producer.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorComputeAtNonConsumer, Throws) {
    Tensor A = placeholder({16}, Float(32), "A");
    Tensor B = compute(
        {16}, [&](Var i) { return A(i) + 1.0f; }, "B");
    Tensor C = compute(
        {16}, [&](Var i) { return A(i) * 2.0f; }, "C");
    Tensor D = compute(
        {16}, [&](Var i) { return B(i) + C(i); }, "D");
    Schedule s = create_schedule({D});
    expect_schedule_error([&] { s.compute_at(s.stage_of(B), s.stage_of(C), 0); },
                          {"compute_at", "stage 'B'", "target 'C' does not read 'B'",
                           "consumers: 'D'", "loop nest", "for i0 in range(16)"});
    EXPECT_TRUE(s.steps().empty());
}
