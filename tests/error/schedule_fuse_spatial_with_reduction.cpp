// Fuse of a data-parallel loop with a reduction loop.
#include "common/Builders.h"
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;
using tessel::testing::Matmul;

TEST(ErrorFuseSpatialWithReduction, Throws) {
    Matmul mm(16, 12, 8);
    Tensor C = mm.C;
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
