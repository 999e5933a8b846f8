// Fuse of a data-parallel loop with a reduction loop.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorFuseSpatialWithReduction, Throws) {
    Tensor A = placeholder({16, 8}, Float(32), "A");
    Tensor B = placeholder({8, 12}, Float(32), "B");
    IterVar k = reduce_axis({0, 8}, "k");
    Tensor C = compute(
        {16, 12}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    expect_schedule_error(
        [&] {
            s.fuse(c, {1, 2});
        },
        {"fuse", "stage 'C'", "'i1'", "'k'", "reduction", "loop nest",
         "for k in range(8)  # reduce"});
    EXPECT_TRUE(s.steps().empty());
}
