// compute_root of an inlined stage whose producer was then computed at the inlined stage's
// reader: the producer would be read by the root stage, outside its attach loop.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorComputeRootOfInlinedBreaksAttachment, Throws) {
    Tensor A = placeholder({16}, Float(32), "A");
    Tensor P = compute(
        {16}, [&](Var i) { return A(i) + 1.0f; }, "P");
    Tensor B = compute(
        {16}, [&](Var i) { return P(i) * 2.0f; }, "B");
    Tensor C = compute(
        {16}, [&](Var i) { return B(i) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    int p = s.stage_of(P), b = s.stage_of(B), c = s.stage_of(C);
    s.split(c, 0, 4);
    s.compute_inline(b);
    s.compute_at(p, c, 0);  // P's reader is C now
    expect_schedule_error([&] { s.compute_root(b); },
                          {"compute_root", "stage 'B'", "'P' is computed at 'C'", "its reader 'B'",
                           "compute_root 'P' first"});
    EXPECT_EQ(s.stage(b).attach, AttachKind::Inlined);
    s.compute_at(b, c, 1);  // still legal: B inside C
}
