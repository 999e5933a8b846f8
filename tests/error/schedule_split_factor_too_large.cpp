// split by a factor that does not fit the iterator's index type (it used to wrap to 0 loops).
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorSplitFactorTooLarge, Throws) {
    Tensor A = placeholder({16, 12}, Float(32), "A");
    Tensor B = compute(
        {16, 12}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    int b = s.stage_of(B);
    expect_schedule_error([&] { s.split(b, 0, int64_t(1) << 40); },
                          {"split", "stage 'B'", "factor 1099511627776", "'i0'", "int32",
                           "loop nest", "for i0 in range(16)"});
    EXPECT_TRUE(s.steps().empty());
    s.split(b, 0, int64_t(1) << 30);  // fits: one outer iteration, guarded
    EXPECT_EQ(s.stage(b).iters[s.stage(b).leaf[0]].const_extent(), 1);
}
