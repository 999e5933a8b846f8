// Parallel of a reduction loop.
#include "common/Builders.h"
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;
using tessel::testing::Matmul;

TEST(ErrorParallelReductionAxis, Throws) {
    Matmul mm(16, 12, 8);
    Tensor C = mm.C;
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    expect_schedule_error([&] { s.parallel(c, 2); },
                          {"parallel", "stage 'C'", "'k'", "reduction axis", "rfactor", "loop nest",
                           "for i0 in range(16)"});
    EXPECT_TRUE(s.steps().empty());
}
