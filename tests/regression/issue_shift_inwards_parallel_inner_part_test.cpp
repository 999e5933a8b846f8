// Regression test from the schedule fuzzer (tests/fuzz/schedule_fuzz_test.cpp): the
// minimised step list below, applied to the suite operator 'batch_matmul', failed:
//   run: race in parallel loop i0.inner: iteration 1 writes element 35 of C, which iteration 0 ...
//   (a parallel loop over the inner part of a shift-inwards split, outside its outer part, visi...
//   recomputed point in two iterations; now guarded)
// The case must lower with bounds checks, run in bounds, match the reference interpreter
// and replay (directly and through JSON) to byte-identical IR.
#include <gtest/gtest.h>

#include "fuzz/support/FuzzCase.h"

TEST(Regression, ShiftInwardsParallelInnerPart) {
    const char* steps = R"json([
  {"factor":2,"iter":0,"kind":"split","nparts":false,"stage":2,"tail":"shift_inwards"},
  {"kind":"reorder","order":[1,0,2,3,4],"stage":2},
  {"annotation":"parallel","iter":0,"kind":"annotate","stage":2}
])json";
    tessel::fuzz::CaseOutcome r = tessel::fuzz::check_steps_json("batch_matmul", steps, 20240603);
    EXPECT_EQ(r.verdict, tessel::fuzz::Verdict::Pass)
        << tessel::fuzz::verdict_name(r.verdict) << " (" << r.category << "): " << r.message;
}
