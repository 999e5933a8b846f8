// Regression test (issue 22, TVM's softmax schedule): compute_at of a producer before its other
// readers are attached, s[M].compute_at(s[Y], i) then s[S].compute_at(s[Y], i), was refused at
// the first call although the finished schedule is legal. It is accepted now; a schedule still
// incomplete when it is lowered fails there, naming both stages; what no later step can mend (a
// reader that is an output) still fails at the call.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"
#include "error/ExpectScheduleError.h"
#include "tessel/lower/VerifySchedule.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::expect_schedule_error;

namespace {

// Softmax over rows with the exponential inlined: M = max_k X, S = sum_k exp(X - M),
// Y = exp(X - M) / S. M is read by S and Y, S by Y.
struct Softmax {
    Tensor X, M, S, Y;
    Softmax() {
        X = placeholder({6, 20}, Float(32), "X");
        IterVar k = reduce_axis(Range(0, 20), "k");
        M = compute(
            {6}, [&](Var i) { return max(X(i, k.var()), {k}); }, "M");
        IterVar k2 = reduce_axis(Range(0, 20), "k2");
        S = compute(
            {6}, [&](Var i) { return sum(exp(X(i, k2.var()) - M(i)), {k2}); }, "S");
        Y = compute(
            {6, 20}, [&](Var i, Var j) { return exp(X(i, j) - M(i)) / S(i); }, "Y");
    }
};

}  // namespace

TEST(Regression, ComputeAtBeforeOtherReadersIsAcceptedWhenFinished) {
    Softmax f;
    Schedule s = create_schedule({f.Y});
    int y = s.stage_of(f.Y), m = s.stage_of(f.M), sm = s.stage_of(f.S);
    s.compute_at(m, y, 0);  // S, the other reader of M, is still at the root
    EXPECT_EQ(s.steps().size(), 1u);
    s.split(y, 1, 4);  // later primitives are not blamed for the incomplete attachment
    s.compute_at(sm, y, 0);
    expect_matches_reference(s, 20);
}

TEST(Regression, ComputeAtLeftIncompleteFailsAtLowering) {
    Softmax f;
    Schedule s = create_schedule({f.Y});
    int y = s.stage_of(f.Y), m = s.stage_of(f.M);
    s.compute_at(m, y, 0);
    std::vector<Tensor> args{f.X, f.Y};
    expect_schedule_error([&] { lower(s, args); },
                          {"stage 'M' is computed at 'Y'", "its reader 'S'", "compute_at 'S'"});
    expect_schedule_error([&] { verify_schedule(s, Target("llvm")); },
                          {"verify_schedule", "stage 'M'", "reader 'S'"});
}

TEST(Regression, ComputeAtWithAnOutputReaderStillFailsAtTheCall) {
    // M is read by Y (the output) and S: computing M inside S can never be legal.
    Softmax f;
    Schedule s = create_schedule({f.Y});
    int m = s.stage_of(f.M), sm = s.stage_of(f.S);
    expect_schedule_error([&] { s.compute_at(m, sm, 0); },
                          {"compute_at", "stage 'M'", "'Y'", "an output", "loop nest"});
    EXPECT_TRUE(s.steps().empty());
}

// TVM's GPU convolution caches its padded input, an inlined stage, in shared memory:
// s[Apad].compute_inline(); AA = s.cache_read(Apad, "shared", [B]). The cache stage computes the
// inlined stage's values. (This was refused: "is inlined; it has no storage".)
TEST(Regression, CacheReadOfAnInlinedStageComputesItsValues) {
    Tensor A = placeholder({16, 8}, Float(32), "A");
    Tensor P = compute(
        {18, 8},
        [&](Var i, Var j) {
            return if_then_else(i >= 1 && i < 17, A(max(i - 1, 0), j), make_const(Float(32), 0));
        },
        "P");
    Tensor C = compute(
        {16, 8}, [&](Var i, Var j) { return P(i, j) + P(i + 2, j); }, "C");
    Schedule s = create_schedule({C});
    s.compute_inline(s.stage_of(P));
    int cache = s.cache_read(s.stage_of(P), "global", {s.stage_of(C)});
    int c = s.stage_of(C);
    s.split(c, 0, 4);
    s.compute_at(cache, c, 0);
    expect_matches_reference(s);
}
