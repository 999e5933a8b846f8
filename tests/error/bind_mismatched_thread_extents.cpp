// lower: two stages of one kernel bind threadIdx.x to loops of different extents.
#include "error/ExpectScheduleError.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ScheduleError, MismatchedThreadExtentsInOneKernel) {
    Tensor A = placeholder({4, 32}, Float(32), "A");
    Tensor P = compute(
        {4, 32}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "P");
    Tensor C = compute(
        {4, 32}, [&](Var i, Var j) { return P(i, j) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    int p = s.stage_of(P), c = s.stage_of(C);
    s.bind(c, 0, IterAnnotation::BlockX);
    s.bind(c, 1, IterAnnotation::ThreadX);  // 32 threads
    s.compute_at(p, c, 0);
    s.set_scope(p, StorageScope::Shared);
    s.split(p, 1, 16);
    s.bind(p, 2, IterAnnotation::ThreadX);  // 16 threads: disagrees
    expect_schedule_error(
        [&] {
            lower(s, {A, C});
        },
        {"lower: stage", "thread axis threadIdx.x has extent", "32", "16",
         "every stage of one kernel must agree on thread extents"});
}
