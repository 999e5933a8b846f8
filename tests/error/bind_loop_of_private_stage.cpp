// lower: a stage private to each thread (computed inside a kernel, not shared) binds a loop to
// threadIdx: each thread would compute only its share of its own copy (found by the fuzzer).
#include "error/ExpectScheduleError.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ScheduleError, BindLoopOfPrivateStage) {
    Tensor A = placeholder({4, 16}, Float(32), "A");
    Tensor P = compute(
        {4, 16}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "P");
    Tensor C = compute(
        {4, 16}, [&](Var i, Var j) { return P(i, 15 - j); }, "C");
    Schedule s = create_schedule({C});
    int p = s.stage_of(P), c = s.stage_of(C);
    s.bind(c, 0, IterAnnotation::BlockX);
    s.bind(c, 1, IterAnnotation::ThreadX);
    s.compute_at(p, c, 0);  // global scope inside the kernel: one copy per thread
    s.bind(p, 1, IterAnnotation::ThreadX);
    expect_schedule_error(
        [&] {
            lower(s, {A, C});
        },
        {"lower: stage 'P'", "bound to threadIdx.x", "private to each thread",
         "set_scope it to shared"});
}
