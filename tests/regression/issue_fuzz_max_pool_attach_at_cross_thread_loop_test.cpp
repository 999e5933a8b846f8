// Regression test from the schedule fuzzer (TESSEL_FUZZ_SEED=20261123, case 1743, max_pool),
// minimised to three steps: fuse pool's loops c, y, x; bind its inner reduction loop rx to
// threadIdx.x (a cross-thread reduction); compute relu at rx. It failed:
//   verify_lowered: variable used before its definition: ry
// The cross-thread reduction puts its bound loops outside the serial reduction loops, so relu,
// whose region was inferred per (ry, rx), was computed before the ry loop existed. A stage
// computed at a bound loop that had serial reduction loops outside it is now computed inside
// the innermost of them. The case must lower with bounds checks, run (as an SPMD program) in
// bounds, match the reference interpreter and replay to byte-identical IR.
#include <gtest/gtest.h>

#include "fuzz/support/FuzzCase.h"

namespace {

void expect_pass(const char* steps) {
    tessel::fuzz::CaseOutcome r = tessel::fuzz::check_steps_json("max_pool", steps, 20261123);
    EXPECT_EQ(r.verdict, tessel::fuzz::Verdict::Pass)
        << tessel::fuzz::verdict_name(r.verdict) << " (" << r.category << "): " << r.message;
}

}  // namespace

TEST(Regression, FuzzMaxPoolComputeAtCrossThreadReductionLoop) {
    expect_pass(R"json([
  {"kind":"fuse","stage":2,"iters":[1,2,3]},
  {"kind":"annotate","stage":2,"iter":3,"annotation":"threadIdx.x"},
  {"kind":"compute_at","stage":1,"target":2,"target_iter":3}
])json");
}

TEST(Regression, FuzzMaxPoolComputeAtThenBindCrossThreadReductionLoop) {
    // The same schedule with the steps in the other order, and with both reduction loops bound
    // apart (ry serial inside a bound rx: nothing to move).
    expect_pass(R"json([
  {"kind":"fuse","stage":2,"iters":[1,2,3]},
  {"kind":"compute_at","stage":1,"target":2,"target_iter":3},
  {"kind":"annotate","stage":2,"iter":3,"annotation":"threadIdx.x"}
])json");
    expect_pass(R"json([
  {"kind":"reorder","stage":2,"order":[0,1,2,3,5,4]},
  {"kind":"annotate","stage":2,"iter":4,"annotation":"threadIdx.x"},
  {"kind":"compute_at","stage":1,"target":2,"target_iter":5}
])json");
}
