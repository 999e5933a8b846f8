// storage_align with a non-positive factor.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorStorageAlignNonpositiveFactor, Throws) {
    Tensor A = placeholder({16, 8}, Float(32), "A");
    Tensor B = compute(
        {16, 8}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Tensor C = compute(
        {16, 8}, [&](Var i, Var j) { return B(i, j) * 2.0f; }, "C");
    Schedule s = create_schedule({C});
    expect_schedule_error([&] { s.storage_align(s.stage_of(B), 0, 0, 0); },
                          {"storage_align", "stage 'B'", "factor 0 for storage dimension 0 (i0)",
                           "must be positive"});
    EXPECT_TRUE(s.steps().empty());
}
