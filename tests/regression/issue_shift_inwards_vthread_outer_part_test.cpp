// Regression test from the schedule fuzzer (tests/fuzz/schedule_fuzz_test.cpp): the
// minimised step list below, applied to the suite operator 'depthwise_conv', failed:
//   run: output 'dwconv': 90 of 315 elements differ; worst at [0, 1, 5, 5]: actual -5.50820732 ...
//   (the outer part of the shifted split was a vthread loop outside the reduction loops;
//   inject_virtual_threads sank it inside them, so recomputed points were accumulated twice)
// The case must lower with bounds checks, run in bounds, match the reference interpreter
// and replay (directly and through JSON) to byte-identical IR.
#include <gtest/gtest.h>

#include "fuzz/support/FuzzCase.h"

TEST(Regression, ShiftInwardsVThreadOuterPart) {
    const char* steps = R"json([
  {"factor":3,"iter":3,"kind":"split","nparts":false,"stage":2,"tail":"shift_inwards"},
  {"annotation":"vthread","iter":3,"kind":"annotate","stage":2},
  {"kind":"reorder","order":[3,2,5,1,0,4,6],"stage":2}
])json";
    tessel::fuzz::CaseOutcome r =
        tessel::fuzz::check_steps_json("depthwise_conv", steps, 778836563);
    EXPECT_EQ(r.verdict, tessel::fuzz::Verdict::Pass)
        << tessel::fuzz::verdict_name(r.verdict) << " (" << r.category << "): " << r.message;
}
