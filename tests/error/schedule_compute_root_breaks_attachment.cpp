// compute_root of a stage whose producer is computed inside another stage: the producer would be
// read outside its attach loop (this used to pass and fail only in lower()).
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorComputeRootBreaksAttachment, Throws) {
    Tensor A = placeholder({16}, Float(32), "A");
    Tensor P = compute(
        {16}, [&](Var i) { return A(i) + 1.0f; }, "P");
    Tensor B = compute(
        {16}, [&](Var i) { return P(i) * 2.0f; }, "B");
    Tensor C = compute(
        {16}, [&](Var i) { return B(i) + P(i); }, "C");
    Schedule s = create_schedule({C});
    int p = s.stage_of(P), b = s.stage_of(B), c = s.stage_of(C);
    s.compute_at(b, c, 0);
    s.compute_at(p, c, 0);
    expect_schedule_error([&] { s.compute_root(b); },
                          {"compute_root", "stage 'B'", "'P' is computed at 'C'", "its reader 'B'",
                           "loop nest", "for i0 in range(16)"});
    EXPECT_EQ(s.steps().size(), 2u);
    EXPECT_EQ(s.stage(b).attach, AttachKind::At);
}
