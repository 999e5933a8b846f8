// Regression test from the schedule fuzzer (tests/fuzz/schedule_fuzz_test.cpp): the
// minimised step list below, applied to the suite operator 'conv2d', failed:
//   run: allocate pad: extent 2 is -2147483646, must be positive
//   (the region of 'pad', computed inside 'conv' which is computed inside 'relu', depends on re...
//   loop variables, which bound inference did not bound: the extent bound overflowed int32)
// The case must lower with bounds checks, run in bounds, match the reference interpreter
// and replay (directly and through JSON) to byte-identical IR.
#include <gtest/gtest.h>

#include "fuzz/support/FuzzCase.h"

TEST(Regression, NestedComputeAtRegionBoundOverflow) {
    const char* steps = R"json([
  {"kind":"compute_at","stage":3,"target":4,"target_iter":2},
  {"kind":"compute_at","stage":1,"target":3,"target_iter":0}
])json";
    tessel::fuzz::CaseOutcome r = tessel::fuzz::check_steps_json("conv2d", steps, 20240603);
    EXPECT_EQ(r.verdict, tessel::fuzz::Verdict::Pass)
        << tessel::fuzz::verdict_name(r.verdict) << " (" << r.category << "): " << r.message;
}
