// cache_write: a reduction computed into local storage and copied out, the register-tile pattern
// (the cache stage computed at the GEMM's tile), multi-output (argmax), chained consumers.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::Matmul;

TEST(ScheduleCacheWrite, RootCacheOfAGemm) {
    for (const char* scope : {"global", "shared", "local"}) {
        Matmul mm(12, 20, 9);
        Schedule s = create_schedule({mm.C});
        int c = s.stage_of(mm.C);
        int cl = s.cache_write(c, scope);
        EXPECT_EQ(cl, c);
        EXPECT_EQ(s.stage_of(mm.C), c + 1);
        EXPECT_EQ(s.stage(cl).iters.size(), 3u);  // i, j, k
        expect_matches_reference(s, 9);
    }
}

TEST(ScheduleCacheWrite, RegisterTileUnderTheGemmsTile) {
    Matmul mm(30, 48, 16);
    Schedule s = create_schedule({mm.C});
    int cl = s.cache_write(s.stage_of(mm.C), "local");
    int c = s.stage_of(mm.C);
    s.tile(c, 0, 1, 4, 16);    // io jo ii ji
    s.compute_at(cl, c, 1);    // the local tile per (io, jo)
    s.reorder(cl, {2, 0, 1});  // k i j
    s.vectorize(cl, 2);
    s.vectorize(c, 3);
    std::string ir = expect_matches_reference(s, 16);
    EXPECT_NE(ir.find("C.local"), std::string::npos) << ir;
}

TEST(ScheduleCacheWrite, ElementwiseStageWithConsumer) {
    Tensor A = placeholder({10, 7}, Float(32), "A");
    Tensor B = compute(
        {10, 7}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "B");
    Tensor C = compute(
        {10, 7}, [&](Var i, Var j) { return B(i, j) - 1.0f; }, "C");
    Schedule s = create_schedule({C});
    int bl = s.cache_write(s.stage_of(B), "local");
    int b = s.stage_of(B), c = s.stage_of(C);
    EXPECT_EQ(b, bl + 1);
    s.split(c, 0, 3);
    s.compute_at(b, c, 0);
    s.compute_at(bl, b, 1);
    expect_matches_reference(s);
}

TEST(ScheduleCacheWrite, ArgmaxBothOutputs) {
    Tensor X = placeholder({6, 25}, Float(32), "X");
    IterVar k = reduce_axis({0, 25}, "k");
    std::vector<Tensor> am = compute_multi(
        {6}, [&](Var i) { return argmax(k.var(), X(i, k), {k}); }, "am");
    Schedule s = create_schedule(am);
    int al = s.cache_write(s.stage_of(am[0]), "local");
    s.split(al, 1, 4);
    expect_matches_reference(s);
}

TEST(ScheduleCacheWrite, ThenCacheReadOfTheSameGemm) {
    Matmul mm(16, 24, 12);
    Schedule s = create_schedule({mm.C});
    int cl = s.cache_write(s.stage_of(mm.C), "local");
    int as = s.cache_read(s.stage_of(mm.A), "shared", {cl});
    cl = s.stage_of(mm.C) - 1;
    int c = s.stage_of(mm.C);
    s.split(c, 0, 8);
    s.compute_at(cl, c, 0);
    s.compute_at(as, cl, 0);
    expect_matches_reference(s, 12);
}
