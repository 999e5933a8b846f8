// Regression test from the schedule fuzzer (tests/fuzz/schedule_fuzz_test.cpp): the
// minimised step list below, applied to the suite operator 'transpose', failed:
//   run: race in parallel loop i0.i2.fused.inner: iteration 1 writes element 199 of scale, whic...
//   (the parallel loop was derived from the shifted split's inner part; now guarded)
// The case must lower with bounds checks, run in bounds, match the reference interpreter
// and replay (directly and through JSON) to byte-identical IR.
#include <gtest/gtest.h>

#include "fuzz/support/FuzzCase.h"

TEST(Regression, ShiftInwardsParallelFusedPart) {
    const char* steps = R"json([
  {"iters":[0,1],"kind":"fuse","stage":1},
  {"factor":16,"iter":0,"kind":"split","nparts":true,"stage":1,"tail":"shift_inwards"},
  {"kind":"reorder","order":[0,2,1],"stage":1},
  {"kind":"reorder","order":[2,0,1],"stage":1},
  {"annotation":"parallel","iter":0,"kind":"annotate","stage":1}
])json";
    tessel::fuzz::CaseOutcome r = tessel::fuzz::check_steps_json("transpose", steps, 20240603);
    EXPECT_EQ(r.verdict, tessel::fuzz::Verdict::Pass)
        << tessel::fuzz::verdict_name(r.verdict) << " (" << r.category << "): " << r.message;
}
