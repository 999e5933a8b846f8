// Compute_inline of a reduction stage.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorComputeInlineReduction, Throws) {
    Tensor A = placeholder({16, 8}, Float(32), "A");
    IterVar k = reduce_axis({0, 8}, "k");
    Tensor S = compute(
        {16}, [&](Var i) { return sum(A(i, k), {k}); }, "S");
    Tensor R = compute(
        {16}, [&](Var i) { return S(i) * 2.0f; }, "R");
    Schedule s = create_schedule({R});
    expect_schedule_error([&] { s.compute_inline(s.stage_of(S)); },
                          {"compute_inline", "stage 'S'", "reduction", "compute_at it instead",
                           "loop nest", "for k in range(8)  # reduce"});
    EXPECT_TRUE(s.steps().empty());
}
