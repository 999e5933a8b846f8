// Regression test from the schedule fuzzer (tests/fuzz/schedule_fuzz_test.cpp): the
// minimised step list below, applied to the suite operator 'reduce_middle_axis', failed:
//   run: race in parallel loop i0.outer: iteration 1 writes element 80 of square, which iterati...
// The case must lower with bounds checks, run in bounds, match the reference interpreter
// and replay (directly and through JSON) to byte-identical IR.
#include <gtest/gtest.h>

#include "fuzz/support/FuzzCase.h"

TEST(Regression, FuzzReduceMiddleAxisRuntimeErrorC104f42c) {
    const char* steps = R"json([
  {"factor":1,"iter":0,"kind":"split","nparts":false,"stage":1,"tail":"guard"},
  {"factor":8,"iter":2,"kind":"split","nparts":false,"stage":1,"tail":"guard"},
  {"kind":"reorder","order":[0,2,1,3,4],"stage":1},
  {"annotation":"parallel","iter":0,"kind":"annotate","stage":1},
  {"factor":8,"iter":2,"kind":"split","nparts":false,"stage":1,"tail":"round_up"}
])json";
    tessel::fuzz::CaseOutcome r =
        tessel::fuzz::check_steps_json("reduce_middle_axis", steps, 20240603);
    EXPECT_EQ(r.verdict, tessel::fuzz::Verdict::Pass)
        << tessel::fuzz::verdict_name(r.verdict) << " (" << r.category << "): " << r.message;
}
