// storage_align: padded strides of cache stages (root and attached, blocked and transposed).
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::Matmul;

TEST(ScheduleStorageAlign, PaddedSharedTile) {
    Matmul mm(20, 32, 16);
    Schedule s = create_schedule({mm.C});
    int as = s.cache_read(s.stage_of(mm.A), "shared", {s.stage_of(mm.C)});
    s.storage_align(as, 0, 32, 1);  // row stride 16 -> 33
    int c = s.stage_of(mm.C);
    s.split(c, 0, 4);
    s.compute_at(as, c, 0);
    std::string ir = expect_matches_reference(s, 16);
    LoweredFunc f = lower(s, {mm.A, mm.B, mm.C});
    EXPECT_NE(to_string(f).find("33"), std::string::npos) << to_string(f);
}

TEST(ScheduleStorageAlign, EveryDimensionOfABlockedLayout) {
    for (int dim = 0; dim < 3; ++dim) {
        Matmul mm(9, 20, 11);
        Schedule s = create_schedule({mm.C});
        int bp = s.cache_read(s.stage_of(mm.B), "global", {s.stage_of(mm.C)});
        s.storage_split(bp, 1, 8);
        s.storage_reorder(bp, {1, 0, 2});
        s.storage_align(bp, dim, 5, 3);
        SCOPED_TRACE("dim " + std::to_string(dim));
        expect_matches_reference(s, 11);
    }
}

TEST(ScheduleStorageAlign, AlreadyAlignedStrideIsKept) {
    Tensor A = placeholder({8, 16}, Float(32), "A");
    Tensor B = compute(
        {8, 16}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Tensor C = compute(
        {8, 16}, [&](Var i, Var j) { return B(i, j) * B(i, j); }, "C");
    Schedule s = create_schedule({C});
    s.storage_align(s.stage_of(B), 0, 16, 0);  // stride 16 is aligned already
    expect_matches_reference(s);
}
