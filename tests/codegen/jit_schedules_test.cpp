// Schedules run through the LLVM JIT and compared with the reference interpreter: elementwise,
// tiled/vectorized/unrolled/parallel matmul, non-dividing splits, compute_at with a halo,
// reductions, a padded conv2d, softmax.
#include <gtest/gtest.h>

#include "codegen/CodegenTestUtil.h"

using namespace tessel;
using tessel::testing::expect_jit_matches_reference;
using tessel::testing::Matmul;

TEST(JitSchedules, Elementwise) {
    Tensor A = placeholder({37, 5}, Float(32), "A");
    Tensor B = placeholder({37, 5}, Float(32), "B");
    Tensor C = compute(
        {37, 5}, [&](Var i, Var j) { return A(i, j) * B(i, j) + exp(A(i, j)); }, "C");
    Schedule s = create_schedule({C});
    expect_jit_matches_reference(s);
}

TEST(JitSchedules, MatmulTiledVectorizedUnrolledParallel) {
    Matmul mm(64, 48, 32);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.tile(c, 0, 1, 8, 16);            // io jo ii ji k
    s.split(c, 4, 4);                  // io jo ii ji ko ki
    s.reorder(c, {0, 1, 4, 2, 5, 3});  // io jo ko ii ki ji
    s.vectorize(c, 5);
    s.unroll(c, 4);
    s.parallel(c, 0);
    std::string ll = expect_jit_matches_reference(s, 32);
    EXPECT_NE(ll.find("tessel_parallel_for"), std::string::npos);
    EXPECT_NE(ll.find("<16 x float>"), std::string::npos) << ll;
}

TEST(JitSchedules, MatmulNotDividing) {
    Matmul mm(37, 23, 19);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.tile(c, 0, 1, 8, 5);
    s.split(c, 4, 4);
    s.reorder(c, {0, 1, 4, 2, 3, 5});
    s.vectorize(c, 3);
    s.parallel(c, 0);
    expect_jit_matches_reference(s, 19);
}

TEST(JitSchedules, ComputeAtWithHalo) {
    Tensor A = placeholder({30, 12}, Float(32), "A");
    Tensor B = compute(
        {30, 12}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "B");
    Tensor C = compute(
        {29, 10}, [&](Var i, Var j) { return B(i, j) + B(i + 1, j + 2); }, "C");
    for (int depth = 0; depth < 4; ++depth) {
        Schedule s = create_schedule({C});
        int c = s.stage_of(C), b = s.stage_of(B);
        s.tile(c, 0, 1, 8, 3);
        s.compute_at(b, c, depth);
        SCOPED_TRACE("depth " + std::to_string(depth));
        expect_jit_matches_reference(s);
    }
}

TEST(JitSchedules, SumAndMax) {
    Tensor X = placeholder({13, 29}, Float(32), "X");
    IterVar k1 = reduce_axis({0, 29}, "k1"), k2 = reduce_axis({0, 29}, "k2");
    Tensor S = compute(
        {13}, [&](Var i) { return sum(X(i, k1), {k1}); }, "S");
    Tensor M = compute(
        {13}, [&](Var i) { return max(X(i, k2), {k2}); }, "M");
    Schedule s = create_schedule({S, M});
    s.split(s.stage_of(S), 1, 4);
    s.parallel(s.stage_of(M), 0);
    expect_jit_matches_reference(s, 29);
}

TEST(JitSchedules, Argmax) {
    Tensor X = placeholder({11, 19}, Float(32), "X");
    IterVar k = reduce_axis({0, 19}, "k");
    std::vector<Tensor> r = compute_multi(
        {11}, [&](const std::vector<Var>& v) { return argmax(k.var(), X(v[0], k), {k}); },
        "argmax");
    Schedule s = create_schedule(r);
    int st = s.stage_of(r[0]);
    s.split(st, 1, 4);
    s.split(st, 0, 3);
    s.reorder(st, {0, 2, 1, 3});
    expect_jit_matches_reference(s, 19);
}

TEST(JitSchedules, Conv2dPadded) {
    using tessel::testing::conv2d_3x3;
    Tensor X = placeholder({2, 3, 9, 10}, Float(32), "X");
    Tensor W = placeholder({5, 3, 3, 3}, Float(32), "W");
    Tensor C = conv2d_3x3(X, W, 1, "conv");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.tile(c, 2, 3, 4, 4);
    s.split(c, 1, 2);
    s.reorder(c, {0, 1, 3, 4, 7, 8, 2, 5, 9, 6});
    s.vectorize(c, 9);
    s.parallel(c, 0);
    expect_jit_matches_reference(s, 27);
}

TEST(JitSchedules, Softmax) {
    const int n = 9, m = 33;
    Tensor X = placeholder({n, m}, Float(32), "X");
    IterVar k1 = reduce_axis({0, m}, "k1"), k2 = reduce_axis({0, m}, "k2");
    Tensor mx = compute(
        {n}, [&](Var i) { return max(X(i, k1), {k1}); }, "mx");
    Tensor e = compute(
        {n, m}, [&](Var i, Var j) { return exp(X(i, j) - mx(i)); }, "e");
    Tensor sm = compute(
        {n}, [&](Var i) { return sum(e(i, k2), {k2}); }, "s");
    Tensor out = compute(
        {n, m}, [&](Var i, Var j) { return e(i, j) / sm(i); }, "softmax");
    Schedule s = create_schedule({out});
    s.split(s.stage_of(out), 1, 8);
    s.vectorize(s.stage_of(out), 2);
    s.parallel(s.stage_of(out), 0);
    expect_jit_matches_reference(s, m);
}
