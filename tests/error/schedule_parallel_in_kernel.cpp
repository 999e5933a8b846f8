// A CPU-parallel loop in a stage that binds blockIdx/threadIdx: refused by the primitive that
// makes the mix (annotate or bind), in either order, and the schedule is unchanged.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorParallelInKernel, ParallelAfterBind) {
    Tensor A = placeholder({64, 32}, Float(32), "A");
    Tensor B = compute(
        {64, 32}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    s.bind(1, 0, IterAnnotation::BlockX);
    expect_schedule_error([&] { s.parallel(1, 1); },
                          {"parallel", "stage 'B'", "loop 'i1' is parallel", "bound to blockIdx.x",
                           "no CPU threads"});
    EXPECT_EQ(s.steps().size(), 1u);
    EXPECT_EQ(s.stage(1).iters[s.stage(1).leaf[1]].annotation, IterAnnotation::None);
}

TEST(ErrorParallelInKernel, BindAfterParallel) {
    Tensor A = placeholder({64, 32}, Float(32), "A");
    Tensor B = compute(
        {64, 32}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    s.parallel(1, 0);
    expect_schedule_error([&] { s.bind(1, 1, IterAnnotation::ThreadX); },
                          {"bind", "stage 'B'", "loop 'i0' is parallel", "threadIdx.x"});
    EXPECT_EQ(s.steps().size(), 1u);
}
