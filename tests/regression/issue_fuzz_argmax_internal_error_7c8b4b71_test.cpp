// Regression test from the schedule fuzzer (tests/fuzz/schedule_fuzz_test.cpp): the
// minimised step list below, applied to the suite operator 'argmax', failed:
//   lower: Internal error at src/ir/IR.cpp:220: check failed: a.type() == b.type()
//   Sub of mismatched types int32 and int32x7
// The case must lower with bounds checks, run in bounds, match the reference interpreter
// and replay (directly and through JSON) to byte-identical IR.
#include <gtest/gtest.h>

#include "fuzz/support/FuzzCase.h"

TEST(Regression, FuzzArgmaxInternalError7c8b4b71) {
    const char* steps = R"json([
  {"kind":"reorder","order":[1,0],"stage":1},
  {"annotation":"vectorize","iter":1,"kind":"annotate","stage":1},
  {"factor":12,"iter":0,"kind":"split","nparts":false,"stage":1,"tail":"guard"},
  {"factor":7,"iter":1,"kind":"split","nparts":false,"stage":1,"tail":"guard"}
])json";
    tessel::fuzz::CaseOutcome r = tessel::fuzz::check_steps_json("argmax", steps, 20240603);
    EXPECT_EQ(r.verdict, tessel::fuzz::Verdict::Pass)
        << tessel::fuzz::verdict_name(r.verdict) << " (" << r.category << "): " << r.message;
}
