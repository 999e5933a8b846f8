// lower() arguments listing a tensor of another DAG.
#include "error/ExpectScheduleError.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorLowerTensorOfAnotherDag, Throws) {
    Tensor A = placeholder({16}, Float(32), "A");
    Tensor B = compute(
        {16}, [&](Var i) { return A(i) + 1.0f; }, "B");
    Tensor A2 = placeholder({16}, Float(32), "A2");
    Schedule s = create_schedule({B});
    expect_schedule_error(
        [&] {
            lower(s, {A, A2, B});
        },
        {"lower", "argument 'A2'", "not a tensor of this schedule's DAG"});
}
