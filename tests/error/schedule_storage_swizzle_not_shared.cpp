// storage_swizzle of a stage that is not in shared memory (a CPU schedule's intermediate stage):
// refused when the schedule is lowered, naming the stage and its storage.
#include "error/ExpectScheduleError.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorStorageSwizzleNotShared, Throws) {
    Tensor A = placeholder({16, 32}, Float(32), "A");
    Tensor B = compute(
        {16, 32}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Tensor C = compute(
        {16, 32}, [&](Var i, Var j) { return B(i, j) * 2.0f; }, "C");
    Schedule s = create_schedule({C});
    s.storage_swizzle(s.stage_of(B));
    expect_schedule_error(
        [&] {
            lower(s, {A, C});
        },
        {"storage_swizzle", "stage 'B'", "has global storage",
         "only shared buffers of a GPU kernel are swizzled", "loop nest of 'B'"});
}
