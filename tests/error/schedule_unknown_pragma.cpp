// A pragma step with a key tessel does not know.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorUnknownPragma, Throws) {
    Tensor A = placeholder({16, 8}, Float(32), "A");
    Tensor B = placeholder({8, 12}, Float(32), "B");
    IterVar k = reduce_axis({0, 8}, "k");
    Tensor C = compute(
        {16, 12}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
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
