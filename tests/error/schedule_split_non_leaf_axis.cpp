// Split of an axis that is no longer a leaf (its position is out of range).
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorSplitNonLeafAxis, Throws) {
    Tensor A = placeholder({16, 8}, Float(32), "A");
    Tensor B = placeholder({8, 12}, Float(32), "B");
    IterVar k = reduce_axis({0, 8}, "k");
    Tensor C = compute(
        {16, 12}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.split(c, 0, 4);  // i0 is no longer a leaf: i0.outer, i0.inner, i1, k
    expect_schedule_error([&] { s.split(c, 4, 2); },
                          {"split", "stage 'C'", "iterator position 4", "0..3", "loop nest",
                           "for i0.outer in range(4)", "for k in range(8)"});
    EXPECT_EQ(s.steps().size(), 1u);
}
