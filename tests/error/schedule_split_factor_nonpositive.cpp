// Split by a factor <= 0.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorSplitFactorNonPositive, Throws) {
    Tensor A = placeholder({16, 8}, Float(32), "A");
    Tensor B = placeholder({8, 12}, Float(32), "B");
    IterVar k = reduce_axis({0, 8}, "k");
    Tensor C = compute(
        {16, 12}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    expect_schedule_error(
        [&] { s.split(c, 1, 0); },
        {"split", "stage 'C'", "factor 0", "'i1'", "positive", "loop nest", "for i1 in range(12)"});
    expect_schedule_error([&] { s.split_nparts(c, 1, -3); }, {"split", "nparts -3", "'i1'"});
    EXPECT_TRUE(s.steps().empty());
}
