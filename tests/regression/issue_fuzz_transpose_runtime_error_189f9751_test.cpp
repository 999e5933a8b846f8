// Regression test from the schedule fuzzer (tests/fuzz/schedule_fuzz_test.cpp): the
// minimised step list below, applied to the suite operator 'transpose', failed:
//   run: race in parallel loop i1.inner.inner: iteration 1 writes element 1 of scale, which ite...
// The case must lower with bounds checks, run in bounds, match the reference interpreter
// and replay (directly and through JSON) to byte-identical IR.
#include <gtest/gtest.h>

#include "fuzz/support/FuzzCase.h"

TEST(Regression, FuzzTransposeRuntimeError189f9751) {
    const char* steps = R"json([
  {"factor":4,"iter":1,"kind":"split","nparts":true,"stage":1,"tail":"guard"},
  {"factor":3,"iter":2,"kind":"split","nparts":false,"stage":1,"tail":"round_up"},
  {"kind":"reorder","order":[3,2,1,0,4],"stage":1},
  {"annotation":"parallel","iter":0,"kind":"annotate","stage":1},
  {"factor":8,"iter":1,"kind":"split","nparts":false,"stage":2,"tail":"guard"},
  {"factor":4,"iter":3,"kind":"split","nparts":false,"stage":2,"tail":"shift_inwards"},
  {"factor":4,"iter":1,"kind":"split","nparts":false,"stage":2,"tail":"guard"},
  {"kind":"compute_at","stage":1,"target":2,"target_iter":4}
])json";
    tessel::fuzz::CaseOutcome r = tessel::fuzz::check_steps_json("transpose", steps, 20240603);
    EXPECT_EQ(r.verdict, tessel::fuzz::Verdict::Pass)
        << tessel::fuzz::verdict_name(r.verdict) << " (" << r.category << "): " << r.message;
}
