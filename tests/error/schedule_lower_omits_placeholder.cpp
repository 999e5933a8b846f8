// lower() arguments that omit a placeholder the DAG reads.
#include "common/Builders.h"
#include "error/ExpectScheduleError.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;
using tessel::testing::Matmul;

TEST(ErrorLowerOmitsPlaceholder, Throws) {
    Matmul mm(16, 12, 8);
    Tensor A = mm.A, B = mm.B, C = mm.C;
    Schedule s = create_schedule({C});
    expect_schedule_error(
        [&] {
            lower(s, {A, C});
        },
        {"lower", "omit", "placeholder 'B'", "pass it too"});
}
