// cache_read: copies into global/shared/local storage, attached with compute_at, with storage
// reorders and blocking (B of a GEMM packed into column panels), chains and multi-output stages.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::Matmul;

TEST(ScheduleCacheRead, RootCopyOfAPlaceholder) {
    for (const char* scope : {"global", "shared", "local"}) {
        Matmul mm(20, 24, 12);
        Schedule s = create_schedule({mm.C});
        int c = s.stage_of(mm.C);
        int a = s.stage_of(mm.A);
        int ac = s.cache_read(a, scope, {c});
        EXPECT_EQ(ac, a + 1);
        EXPECT_EQ(s.stage(ac).name(), std::string("A.") + scope);
        EXPECT_EQ(s.stage_of(mm.C), c + 1);  // the user's tensor still names its stage
        std::string ir = expect_matches_reference(s, 12);
        EXPECT_NE(ir.find(std::string("A.") + scope), std::string::npos) << ir;
    }
}

TEST(ScheduleCacheRead, SharedTileAtTheGemmsOuterLoop) {
    Matmul mm(33, 40, 20);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    int as = s.cache_read(s.stage_of(mm.A), "shared", {c});
    int bs = s.cache_read(s.stage_of(mm.B), "shared", {c + 1});
    c = s.stage_of(mm.C);
    s.tile(c, 0, 1, 8, 16);            // io jo ii ji k
    s.split(c, 4, 5);                  // io jo ii ji ko ki
    s.reorder(c, {0, 1, 4, 2, 3, 5});  // io jo ko ii ji ki
    s.compute_at(as, c, 2);
    s.compute_at(bs, c, 2);
    expect_matches_reference(s, 20);
}

TEST(ScheduleCacheRead, PackedBInColumnPanels) {
    // B[k][n] packed as [n/16][k][16] at the GEMM's outer loop: array packing as a schedule.
    Matmul mm(24, 64, 32);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    int bp = s.cache_read(s.stage_of(mm.B), "global", {c});
    c = s.stage_of(mm.C);
    s.storage_split(bp, 1, 16);        // [k][n.outer][n.inner]
    s.storage_reorder(bp, {1, 0, 2});  // [n.outer][k][n.inner]
    s.split(c, 1, 32);                 // i jo ji k
    s.reorder(c, {1, 0, 3, 2});        // jo i k ji
    s.vectorize(c, 3);
    s.compute_at(bp, c, 0);
    std::string ir = expect_matches_reference(s, 32);
    EXPECT_NE(ir.find("B.global[i1 // 16, i0, i1 % 16]"), std::string::npos) << ir;
}

TEST(ScheduleCacheRead, PackedBAtRootWithNonDividingBlock) {
    Matmul mm(10, 30, 14);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    int bp = s.cache_read(s.stage_of(mm.B), "global", {c});
    s.storage_split(bp, 1, 8);  // 30 = 3*8 + 6: the last panel is partial
    s.storage_reorder(bp, {1, 2, 0});
    expect_matches_reference(s, 14);
}

TEST(ScheduleCacheRead, TransposedLocalCopyOfAComputedStage) {
    Tensor A = placeholder({17, 9}, Float(32), "A");
    Tensor B = compute(
        {17, 9}, [&](Var i, Var j) { return A(i, j) * 3.0f; }, "B");
    Tensor C = compute(
        {9, 17}, [&](Var i, Var j) { return B(j, i) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    int bl = s.cache_read(s.stage_of(B), "local", {s.stage_of(C)});
    s.storage_reorder(bl, {1, 0});
    int c = s.stage_of(C);
    s.split(c, 0, 4);
    s.compute_at(bl, c, 0);
    expect_matches_reference(s);
}

TEST(ScheduleCacheRead, OnlyTheListedReaderIsRedirected) {
    Tensor A = placeholder({12}, Float(32), "A");
    Tensor B = compute(
        {12}, [&](Var i) { return A(i) + 1.0f; }, "B");
    Tensor C = compute(
        {12}, [&](Var i) { return A(i) * B(i); }, "C");
    Schedule s = create_schedule({C});
    int ac = s.cache_read(s.stage_of(A), "shared", {s.stage_of(C)});
    EXPECT_EQ(ac, 1);
    expect_matches_reference(s);
}

TEST(ScheduleCacheRead, ReplaysFromJson) {
    Matmul mm(16, 16, 8);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    int bp = s.cache_read(s.stage_of(mm.B), "shared", {c});
    s.storage_split(bp, 1, 4);
    s.storage_reorder(bp, {1, 0, 2});
    s.storage_align(bp, 1, 8, 1);
    c = s.stage_of(mm.C);
    s.compute_at(bp, c, 0);
    Schedule r = schedule_from_json({mm.C}, s.to_json());
    EXPECT_EQ(r.workload_key(), create_schedule({mm.C}).workload_key());
    EXPECT_EQ(to_string(lower(r, {mm.A, mm.B, mm.C})), to_string(lower(s, {mm.A, mm.B, mm.C})));
    expect_matches_reference(r, 8);
}
