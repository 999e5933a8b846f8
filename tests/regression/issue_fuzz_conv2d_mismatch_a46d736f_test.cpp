// Regression test from the schedule fuzzer (tests/fuzz/schedule_fuzz_test.cpp): the
// minimised step list below, applied to the suite operator 'conv2d', failed:
//   run: output 'relu': 41 of 120 elements differ; worst at [0, 3, 3, 4]: actual 0 expected 4.5...
// The cause: 'pad' is computed at conv's reduction loop ry, and binds a loop to threadIdx.y; conv's
// rx, a cross-thread reduction on threadIdx.y, encloses its whole reduction nest once lowered, so
// pad's binding nested inside it ran for one thread only. verify_thread_mapping now counts the
// thread-bound reduction loops of a cross-thread reduction as enclosing every stage attached at
// one of its reduction loops, so pad is inside the kernel and its thread binding of a private
// buffer is rejected (a ScheduleError from lower()).
#include <gtest/gtest.h>

#include "fuzz/support/FuzzCase.h"

TEST(Regression, FuzzConv2dMismatchA46d736f) {
    const char* steps = R"json([
  {"annotation":"threadIdx.y","iter":6,"kind":"annotate","stage":3},
  {"factor":6,"iter":2,"kind":"split","nparts":false,"stage":3,"tail":"guard"},
  {"annotation":"threadIdx.y","iter":2,"kind":"annotate","stage":1},
  {"kind":"compute_at","stage":1,"target":3,"target_iter":6}
])json";
    tessel::fuzz::CaseOutcome r = tessel::fuzz::check_steps_json("conv2d", steps, 20240603);
    EXPECT_EQ(r.verdict, tessel::fuzz::Verdict::LateReject)
        << tessel::fuzz::verdict_name(r.verdict) << " (" << r.category << "): " << r.message;
    EXPECT_NE(r.message.find("stage 'pad': loop 'i2' is bound to threadIdx.y"), std::string::npos)
        << r.message;
}
