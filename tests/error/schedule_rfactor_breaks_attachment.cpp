// rfactor whose new stage would read a producer computed inside a consumer's loop: rejected
// when called (found by the schedule fuzzer's long mode as a ScheduleError from lower()).
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorRfactorBreaksAttachment, Throws) {
    Tensor A = placeholder({4, 12}, Float(32), "A");
    Tensor M = compute(
        {4}, [&](Var i) { return A(i, 0) + 1.0f; }, "M");
    IterVar k = reduce_axis({0, 12}, "k");
    Tensor S = compute(
        {4}, [&](Var i) { return sum(A(i, k) - M(i), {k}); }, "S");
    Tensor O = compute(
        {4}, [&](Var i) { return M(i) + S(i); }, "O");
    Schedule s = create_schedule({O});
    int o = s.stage_of(O), m = s.stage_of(M), r = s.stage_of(S);
    s.compute_at(r, o, 0);
    s.compute_at(m, o, 0);
    s.split(r, 1, 4);
    size_t steps = s.steps().size(), stages = s.stages().size();
    expect_schedule_error([&] { s.rfactor(r, 2, 0); },
                          {"rfactor", "stage 'S'", "stage 'M' is computed at 'O'",
                           "but its reader 'S.rf' would not be computed inside that loop"});
    EXPECT_EQ(s.steps().size(), steps);
    EXPECT_EQ(s.stages().size(), stages);
}
