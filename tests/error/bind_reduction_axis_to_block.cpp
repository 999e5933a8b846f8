// bind: a reduction axis bound to blockIdx (no cross-thread reduction across blocks).
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ScheduleError, BindReductionAxisToBlock) {
    Tensor A = placeholder({8, 64}, Float(32), "A");
    IterVar k = reduce_axis({0, 64}, "k");
    Tensor R = compute(
        {8}, [&](Var i) { return sum(A(i, k), {k}); }, "R");
    Schedule s = create_schedule({R});
    int r = s.stage_of(R);
    expect_schedule_error(
        [&] { s.bind(r, 1, IterAnnotation::BlockX); },
        {"bind: stage 'R'", "'k' is a reduction axis", "needs a cross-thread reduction",
         "threadIdx.x/y/z", "loop nest of 'R'"});
    expect_schedule_error([&] { s.bind(r, 1, IterAnnotation::VThread); },
                          {"'k' is a reduction axis", "vthread"});
    s.bind(r, 1, IterAnnotation::ThreadX);  // possible: an all-reduce over threadIdx.x
}
