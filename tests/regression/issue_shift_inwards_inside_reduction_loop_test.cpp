// Regression test from the schedule fuzzer (tests/fuzz/schedule_fuzz_test.cpp): the
// minimised step list below, applied to the suite operator 'matmul', failed:
//   run: output 'C': 39 of 221 elements differ; worst at [1, 14]: actual -6.30574417 expected -...
//   (the shifted loop ran inside the reduction loop, so recomputed points were accumulated twice)
// The case must lower with bounds checks, run in bounds, match the reference interpreter
// and replay (directly and through JSON) to byte-identical IR.
#include <gtest/gtest.h>

#include "fuzz/support/FuzzCase.h"

TEST(Regression, ShiftInwardsInsideReductionLoop) {
    const char* steps = R"json([
  {"factor":4,"iter":1,"kind":"split","nparts":true,"stage":2,"tail":"shift_inwards"},
  {"kind":"reorder","order":[3,2,0,1],"stage":2}
])json";
    tessel::fuzz::CaseOutcome r = tessel::fuzz::check_steps_json("matmul", steps, 20240603);
    EXPECT_EQ(r.verdict, tessel::fuzz::Verdict::Pass)
        << tessel::fuzz::verdict_name(r.verdict) << " (" << r.category << "): " << r.message;
}
