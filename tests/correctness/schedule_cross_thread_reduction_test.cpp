// Cross-thread reduction: a reduction axis bound to threadIdx lowers to thread_allreduce, for
// sum, max, min and argmax, with and without serial reduction loops around each thread's share.
#include <gtest/gtest.h>

#include <cmath>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;

namespace {

enum class Kind { Sum, Max, Min };

Schedule row_reduction(Kind kind, int n, int m, int threads, Tensor* out) {
    Tensor X = placeholder({n, m}, Float(32), "X");
    IterVar k = reduce_axis({0, m}, "k");
    *out = compute(
        {n},
        [&](Var i) {
            Expr v = X(i, k);
            return kind == Kind::Sum ? sum(v, {k}) : kind == Kind::Max ? max(v, {k}) : min(v, {k});
        },
        "R");
    Schedule s = create_schedule({*out});
    int r = s.stage_of(*out);
    s.bind(r, 0, IterAnnotation::BlockX);
    s.split(r, 1, threads);  // k.outer (serial share), k.inner (threads)
    s.bind(r, 2, IterAnnotation::ThreadX);
    return s;
}

}  // namespace

TEST(CrossThreadReduction, Sum) {
    Tensor R;
    Schedule s = row_reduction(Kind::Sum, 5, 64, 16, &R);
    std::string ir = expect_matches_reference(s, 64);
    EXPECT_NE(ir.find("thread_allreduce"), std::string::npos) << ir;
}

TEST(CrossThreadReduction, SumNonDividingSplit) {
    Tensor R;
    Schedule s = row_reduction(Kind::Sum, 3, 50, 16, &R);  // 50 = 3*16 + 2: guarded shares
    expect_matches_reference(s, 50);
}

TEST(CrossThreadReduction, Max) {
    Tensor R;
    Schedule s = row_reduction(Kind::Max, 4, 40, 8, &R);
    expect_matches_reference(s, 40);
}

TEST(CrossThreadReduction, Min) {
    Tensor R;
    Schedule s = row_reduction(Kind::Min, 4, 24, 24, &R);  // every point on its own thread
    expect_matches_reference(s, 24);
}

TEST(CrossThreadReduction, TwoThreadAxesAndSpatialThreads) {
    Tensor X = placeholder({8, 6, 32}, Float(32), "X");
    IterVar k = reduce_axis({0, 6}, "k"), l = reduce_axis({0, 32}, "l");
    Tensor R = compute(
        {8},
        [&](Var i) {
            return sum(X(i, k, l), {k, l});
        },
        "R");
    Schedule s = create_schedule({R});
    int r = s.stage_of(R);
    s.split(r, 0, 2);  // io ii k l
    s.bind(r, 0, IterAnnotation::BlockX);
    s.bind(r, 1, IterAnnotation::ThreadZ);
    s.bind(r, 2, IterAnnotation::ThreadY);
    s.split(r, 3, 8);  // io ii k lo li
    s.bind(r, 4, IterAnnotation::ThreadX);
    expect_matches_reference(s, 6 * 32);
}

TEST(CrossThreadReduction, Argmax) {
    const int n = 6, m = 48;
    Tensor X = placeholder({n, m}, Float(32), "X");
    IterVar k = reduce_axis({0, m}, "k");
    std::vector<Tensor> r = compute_multi(
        {n}, [&](const std::vector<Var>& v) { return argmax(k.var(), X(v[0], k), {k}); }, "argmax");
    Schedule s = create_schedule(r);
    int st = s.stage_of(r[0]);
    s.bind(st, 0, IterAnnotation::BlockX);
    s.split(st, 1, 16);
    s.bind(st, 2, IterAnnotation::ThreadX);
    // Values with many ties: the lowest index must win across threads too.
    LoweredFunc f = lower(s, {X, r[0], r[1]});
    HostArray x = HostArray::random(Float(32), {n, m}, 7, 0, 3.999);
    for (int64_t i = 0; i < x.size(); ++i) x.set(i, std::floor(x.get(i)));
    HostArray idx(r[0].dtype(), {n}), val(Float(32), {n});
    run_lowered(f, {&x, &idx, &val});
    std::vector<HostArray> ref = evaluate_reference(r, {{X, x}});
    for (int i = 0; i < n; ++i) {
        EXPECT_EQ(idx.get_int(i), ref[0].get_int(i)) << "row " << i;
        EXPECT_EQ(val.get(i), ref[1].get(i)) << "row " << i;
    }
}

TEST(CrossThreadReduction, ResultReadByAnotherStageOfTheKernel) {
    // Row sums into shared memory, then every thread of the block reads them: a barrier is
    // inserted between the all-reduce's store and the reads.
    Tensor X = placeholder({4, 32}, Float(32), "X");
    IterVar k = reduce_axis({0, 32}, "k");
    Tensor S = compute(
        {4}, [&](Var i) { return sum(X(i, k), {k}); }, "S");
    Tensor Y = compute(
        {4, 32}, [&](Var i, Var j) { return X(i, j) / S(i); }, "Y");
    Schedule s = create_schedule({Y});
    int ss = s.stage_of(S), y = s.stage_of(Y);
    s.bind(y, 0, IterAnnotation::BlockX);
    s.bind(y, 1, IterAnnotation::ThreadX);
    s.compute_at(ss, y, 0);
    s.set_scope(ss, StorageScope::Shared);
    s.bind(ss, 1, IterAnnotation::ThreadX);
    expect_matches_reference(s, 32);
    LoweredFunc f = lower(s, {X, Y});
    EXPECT_NE(to_string(f).find("thread_barrier"), std::string::npos) << to_string(f);
}
