// storage_reorder with an order that is not a permutation.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorStorageReorderNotPermutation, Throws) {
    Tensor A = placeholder({16, 8}, Float(32), "A");
    Tensor B = compute(
        {16, 8}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Tensor C = compute(
        {16, 8}, [&](Var i, Var j) { return B(i, j) * 2.0f; }, "C");
    Schedule s = create_schedule({C});
    expect_schedule_error(
        [&] {
            s.storage_reorder(s.stage_of(B), {1, 1});
        },
        {"storage_reorder", "stage 'B'", "order [1, 1] is not a permutation", "[0: i0, 1: i1]",
         "loop nest"});
    EXPECT_TRUE(s.steps().empty());
}
