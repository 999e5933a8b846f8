// lower: a shared-scope stage of a GPU schedule that is not computed inside a kernel.
#include "error/ExpectScheduleError.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ScheduleError, SharedScopeOutsideKernel) {
    Tensor A = placeholder({8, 8}, Float(32), "A");
    Tensor P = compute(
        {8, 8}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "P");
    Tensor C = compute(
        {8, 8}, [&](Var i, Var j) { return P(i, j) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    s.set_scope(s.stage_of(P), StorageScope::Shared);
    s.bind(s.stage_of(C), 0, IterAnnotation::BlockX);  // C is a kernel; P is computed outside it
    expect_schedule_error(
        [&] {
            lower(s, {A, C});
        },
        {"stage 'P' has shared scope but is not computed inside a kernel"});
}
