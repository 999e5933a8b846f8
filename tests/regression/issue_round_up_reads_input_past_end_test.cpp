// Regression test from the schedule fuzzer (tests/fuzz/schedule_fuzz_test.cpp): the
// minimised step list below, applied to the suite operator 'max_pool', failed:
//   run: load from X out of bounds: index [0, 0, 11, 0] (dimension 2: 11 not in [0, 11)), shape...
//   (round-up padding points of 'relu' read the input past its end; now such splits are guarded)
// The case must lower with bounds checks, run in bounds, match the reference interpreter
// and replay (directly and through JSON) to byte-identical IR.
#include <gtest/gtest.h>

#include "fuzz/support/FuzzCase.h"

TEST(Regression, RoundUpReadsInputPastEnd) {
    const char* steps = R"json([
  {"factor":16,"iter":2,"kind":"split","nparts":false,"stage":1,"tail":"round_up"}
])json";
    tessel::fuzz::CaseOutcome r = tessel::fuzz::check_steps_json("max_pool", steps, 20240603);
    EXPECT_EQ(r.verdict, tessel::fuzz::Verdict::Pass)
        << tessel::fuzz::verdict_name(r.verdict) << " (" << r.category << "): " << r.message;
}
