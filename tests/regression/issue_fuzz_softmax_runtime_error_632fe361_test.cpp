// Regression test from the schedule fuzzer (tests/fuzz/schedule_fuzz_test.cpp): a vthread loop
// around a vectorized loop that allocates (row_max attached inside it) expanded the accesses of
// the allocation but not the allocation itself. The
// minimised step list below, applied to the suite operator 'softmax', failed:
//   run: bounds check: row_max[1] outside [0, 1) (i1=0)
// The case must lower with bounds checks, run in bounds, match the reference interpreter
// and replay (directly and through JSON) to byte-identical IR.
#include <gtest/gtest.h>

#include "fuzz/support/FuzzCase.h"

TEST(Regression, FuzzSoftmaxRuntimeError632fe361) {
    const char* steps = R"json([
  {"kind":"compute_at","stage":1,"target":2,"target_iter":1},
  {"annotation":"vectorize","iter":1,"kind":"annotate","stage":2},
  {"annotation":"vthread","iter":0,"kind":"annotate","stage":2}
])json";
    tessel::fuzz::CaseOutcome r = tessel::fuzz::check_steps_json("softmax", steps, 1028720953);
    EXPECT_EQ(r.verdict, tessel::fuzz::Verdict::Pass)
        << tessel::fuzz::verdict_name(r.verdict) << " (" << r.category << "): " << r.message;
}
