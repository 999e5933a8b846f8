// Split by a factor <= 0.
#include "common/Builders.h"
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;
using tessel::testing::Matmul;

TEST(ErrorSplitFactorNonPositive, Throws) {
    Matmul mm(16, 12, 8);
    Tensor C = mm.C;
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    expect_schedule_error(
        [&] { s.split(c, 1, 0); },
        {"split", "stage 'C'", "factor 0", "'i1'", "positive", "loop nest", "for i1 in range(12)"});
    expect_schedule_error([&] { s.split_nparts(c, 1, -3); }, {"split", "nparts -3", "'i1'"});
    EXPECT_TRUE(s.steps().empty());
}
