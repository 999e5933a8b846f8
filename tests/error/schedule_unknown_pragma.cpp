// A pragma step with a key tessel does not know.
#include "common/Builders.h"
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;
using tessel::testing::Matmul;

TEST(ErrorUnknownPragma, Throws) {
    Matmul mm(16, 12, 8);
    Tensor C = mm.C;
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    expect_schedule_error(
        [&] {
            s.apply(PragmaStep{c, "unroll_everything", 4});
        },
        {"pragma", "stage 'C'", "unknown pragma 'unroll_everything'", "auto_unroll_max_step",
         "loop nest", "for i0 in range(16)"});
    EXPECT_TRUE(s.steps().empty());
}
