// bind: one thread axis bound to two loops of one stage.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ScheduleError, BindThreadAxisTwice) {
    Tensor A = placeholder({16, 16}, Float(32), "A");
    Tensor B = compute(
        {16, 16}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    int b = s.stage_of(B);
    s.bind(b, 0, IterAnnotation::ThreadX);
    expect_schedule_error([&] { s.bind(b, 1, IterAnnotation::ThreadX); },
                          {"bind: stage 'B'", "threadIdx.x is already bound to loop 'i0'",
                           "cannot also bind 'i1'", "loop nest of 'B'"});
    EXPECT_EQ(s.steps().size(), 1u);  // the failed bind recorded nothing
}
