// Reorder listing a position twice.
#include "common/Builders.h"
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;
using tessel::testing::Matmul;

TEST(ErrorReorderDuplicates, Throws) {
    Matmul mm(16, 12, 8);
    Tensor C = mm.C;
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    expect_schedule_error(
        [&] {
            s.reorder(c, {0, 0, 2});
        },
        {"reorder", "stage 'C'", "position 0 is listed twice", "permutation", "loop nest",
         "for k in range(8)"});
    EXPECT_TRUE(s.steps().empty());
}
