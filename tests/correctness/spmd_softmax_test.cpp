// SPMD: softmax with one block per row, the row max and the row sum as cross-thread reductions
// into shared memory, exp inlined; matches the reference and is race-free.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"
#include "tessel/ir/IROperator.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;

TEST(SpmdSoftmax, OneBlockPerRow) {
    const int n = 6, m = 40, threads = 16;
    Tensor X = placeholder({n, m}, Float(32), "X");
    IterVar k1 = reduce_axis({0, m}, "k1"), k2 = reduce_axis({0, m}, "k2");
    Tensor M = compute(
        {n}, [&](Var i) { return max(X(i, k1), {k1}); }, "M");
    Tensor E = compute(
        {n, m}, [&](Var i, Var j) { return exp(X(i, j) - M(i)); }, "E");
    Tensor S = compute(
        {n}, [&](Var i) { return sum(E(i, k2), {k2}); }, "S");
    Tensor Y = compute(
        {n, m}, [&](Var i, Var j) { return E(i, j) / S(i); }, "Y");
    Schedule s = create_schedule({Y});
    int mm = s.stage_of(M), e = s.stage_of(E), ss = s.stage_of(S), y = s.stage_of(Y);
    s.compute_inline(e);
    s.bind(y, 0, IterAnnotation::BlockX);
    s.split(y, 1, threads);  // i jo ji
    s.bind(y, 2, IterAnnotation::ThreadX);
    for (int st : {ss, mm}) {  // S first: M is read by S too
        s.compute_at(st, y, 0);
        s.set_scope(st, StorageScope::Shared);
        s.split(st, 1, threads);  // i ko ki
        s.bind(st, 2, IterAnnotation::ThreadX);
    }
    std::string ir = expect_matches_reference(s, m);
    EXPECT_NE(ir.find("thread_allreduce"), std::string::npos) << ir;
    std::string lowered = to_string(lower(s, {X, Y}));
    EXPECT_NE(lowered.find("thread_barrier"), std::string::npos) << lowered;
}
