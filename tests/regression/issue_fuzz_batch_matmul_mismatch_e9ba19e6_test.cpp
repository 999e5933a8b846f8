// Regression test from the schedule fuzzer (tests/fuzz/schedule_fuzz_test.cpp): the
// minimised step list below, applied to the suite operator 'batch_matmul', failed:
//   run: output 'C': 63 of 105 elements differ; worst at [2, 0, 3]: actual -5.36773777 expected...
// The case must lower with bounds checks, run in bounds, match the reference interpreter
// and replay (directly and through JSON) to byte-identical IR.
#include <gtest/gtest.h>

#include "fuzz/support/FuzzCase.h"

TEST(Regression, FuzzBatchMatmulMismatchE9ba19e6) {
    const char* steps = R"json([
  {"factor":16,"iter":1,"kind":"split","nparts":false,"stage":2,"tail":"guard"},
  {"factor":17,"iter":2,"kind":"split","nparts":false,"stage":2,"tail":"guard"},
  {"kind":"reorder","order":[1,5,2,3,0,4],"stage":2},
  {"factor":2,"iter":0,"kind":"split","nparts":true,"stage":2,"tail":"shift_inwards"},
  {"factor":4,"iter":6,"kind":"split","nparts":false,"stage":2,"tail":"shift_inwards"},
  {"kind":"reorder","order":[0,6,2,3,4,7,1,5],"stage":2},
  {"annotation":"vectorize","iter":1,"kind":"annotate","stage":2}
])json";
    tessel::fuzz::CaseOutcome r = tessel::fuzz::check_steps_json("batch_matmul", steps, 7);
    EXPECT_EQ(r.verdict, tessel::fuzz::Verdict::Pass)
        << tessel::fuzz::verdict_name(r.verdict) << " (" << r.category << "): " << r.message;
}
