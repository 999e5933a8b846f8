// lower() arguments listing one output of a multi-output stage but not the other (it used to be
// an InternalError: a load of an undefined buffer).
#include "error/ExpectScheduleError.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorLowerOneOutputOfMultiOutputStage, Throws) {
    Tensor X = placeholder({6, 9}, Float(32), "X");
    IterVar k = reduce_axis({0, 9}, "k");
    std::vector<Tensor> am = compute_multi(
        {6}, [&](const std::vector<Var>& v) { return argmax(k.var(), X(v[0], k), {k}); }, "am");
    Tensor V = compute(
        {6}, [&](Var i) { return am[1](i) + 1.0f; }, "V");
    Schedule s = create_schedule({V});
    expect_schedule_error(
        [&] {
            lower(s, {X, V, am[0]});
        },
        {"lower", "another output of 'am'", "'am.v1'", "every output"});
}
