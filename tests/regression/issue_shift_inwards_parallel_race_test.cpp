// Regression test from the schedule fuzzer (tests/fuzz/schedule_fuzz_test.cpp): the
// minimised step list below, applied to the suite operator 'elementwise_broadcast', failed:
//   run: race in parallel loop i0.i1.fused.outer: iteration 1 writes element 12 of sq, which it...
//   (a parallel loop over the shifted outer iterator recomputes points in two iterations; now g...
// The case must lower with bounds checks, run in bounds, match the reference interpreter
// and replay (directly and through JSON) to byte-identical IR.
#include <gtest/gtest.h>

#include "fuzz/support/FuzzCase.h"

TEST(Regression, ShiftInwardsParallelRace) {
    const char* steps = R"json([
  {"iters":[0,1],"kind":"fuse","stage":6},
  {"factor":79,"iter":0,"kind":"split","nparts":false,"stage":6,"tail":"shift_inwards"},
  {"annotation":"parallel","iter":0,"kind":"annotate","stage":6}
])json";
    tessel::fuzz::CaseOutcome r =
        tessel::fuzz::check_steps_json("elementwise_broadcast", steps, 20240603);
    EXPECT_EQ(r.verdict, tessel::fuzz::Verdict::Pass)
        << tessel::fuzz::verdict_name(r.verdict) << " (" << r.category << "): " << r.message;
}
