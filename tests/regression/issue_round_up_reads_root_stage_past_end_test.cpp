// Regression test from the schedule fuzzer (tests/fuzz/schedule_fuzz_test.cpp): the
// minimised step list below, applied to the suite operator 'layer_norm', failed:
//   run: load from total out of bounds: index [6] (dimension 0: 6 not in [0, 6)), shape [6]
//   (round-up padding points of 'mean' read stage 'total' past its end; now such splits are gua...
// The case must lower with bounds checks, run in bounds, match the reference interpreter
// and replay (directly and through JSON) to byte-identical IR.
#include <gtest/gtest.h>

#include "fuzz/support/FuzzCase.h"

TEST(Regression, RoundUpReadsRootStagePastEnd) {
    const char* steps = R"json([
  {"factor":5,"iter":0,"kind":"split","nparts":false,"stage":2,"tail":"round_up"}
])json";
    tessel::fuzz::CaseOutcome r = tessel::fuzz::check_steps_json("layer_norm", steps, 20240603);
    EXPECT_EQ(r.verdict, tessel::fuzz::Verdict::Pass)
        << tessel::fuzz::verdict_name(r.verdict) << " (" << r.category << "): " << r.message;
}
