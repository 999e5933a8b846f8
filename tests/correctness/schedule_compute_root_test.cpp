// compute_root: undo compute_at and compute_inline; a root intermediate with its own schedule.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;

namespace {

struct Chain {
    Tensor A, B, C;
    Chain() {
        A = placeholder({14, 6}, Float(32), "A");
        B = compute(
            {14, 6}, [&](Var i, Var j) { return A(i, j) + 4.0f; }, "B");
        C = compute(
            {13, 6}, [&](Var i, Var j) { return B(i, j) * B(i + 1, 5 - j); }, "C");
    }
};

}  // namespace

TEST(ScheduleComputeRoot, AfterComputeAt) {
    Chain g;
    Schedule s = create_schedule({g.C});
    int b = s.stage_of(g.B), c = s.stage_of(g.C);
    s.split(c, 0, 4);
    s.compute_at(b, c, 1);
    s.compute_root(b);
    EXPECT_EQ(s.stage(b).attach, AttachKind::Root);
    expect_matches_reference(s);
}

TEST(ScheduleComputeRoot, AfterComputeInline) {
    Chain g;
    Schedule s = create_schedule({g.C});
    int b = s.stage_of(g.B);
    s.compute_inline(b);
    s.compute_root(b);
    std::string ir = expect_matches_reference(s);
    EXPECT_NE(ir.find("allocate"), std::string::npos) << ir;
}

TEST(ScheduleComputeRoot, RootIntermediateScheduledOnItsOwn) {
    Chain g;
    Schedule s = create_schedule({g.C});
    int b = s.stage_of(g.B);
    s.compute_root(b);
    s.split(b, 0, 5);
    s.fuse(b, {1, 2});
    s.vectorize(b, 1);
    expect_matches_reference(s);
}
