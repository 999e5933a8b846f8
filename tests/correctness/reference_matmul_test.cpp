// Reference interpreter: matrix multiplication against plain loops, and its speed.
#include <gtest/gtest.h>

#include <chrono>

#include "tessel/Tolerance.h"
#include "tessel/te/Operation.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;

namespace {

HostArray matmul_loops(const HostArray& a, const HostArray& b, int n, int m, int k) {
    HostArray c(Float(32), {n, m}, ArrayStorage::Ideal);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) {
            double acc = 0;
            for (int r = 0; r < k; ++r) acc += a.get(i * k + r) * b.get(r * m + j);
            c.set(i * m + j, acc);
        }
    return c;
}

}  // namespace

TEST(ReferenceMatmul, MatchesLoops) {
    const int n = 13, m = 7, k = 29;
    Tensor A = placeholder({n, k}, Float(32), "A");
    Tensor B = placeholder({k, m}, Float(32), "B");
    IterVar r = reduce_axis({0, k}, "r");
    Tensor C = compute(
        {n, m}, [&](Var i, Var j) { return sum(A(i, r) * B(r, j), {r}); }, "C");
    HostArray a = HostArray::random(Float(32), {n, k}, 21);
    HostArray b = HostArray::random(Float(32), {k, m}, 22);
    HostArray got = evaluate_reference({C}, {{A, a}, {B, b}})[0];
    EXPECT_CLOSE_TO_REFERENCE(got, matmul_loops(a, b, n, m, k), tolerance_for(Float(64), k));
}

TEST(ReferenceMatmul, Int32AccumulationIsExact) {
    const int n = 8, m = 8, k = 16;
    Tensor A = placeholder({n, k}, Int(8), "A");
    Tensor B = placeholder({k, m}, Int(8), "B");
    IterVar r = reduce_axis({0, k}, "r");
    Tensor C = compute(
        {n, m},
        [&](Var i, Var j) { return sum(cast(Int(32), A(i, r)) * cast(Int(32), B(r, j)), {r}); },
        "C");
    HostArray a = HostArray::random(Int(8), {n, k}, 23, -128, 127);
    HostArray b = HostArray::random(Int(8), {k, m}, 24, -128, 127);
    HostArray got = evaluate_reference({C}, {{A, a}, {B, b}})[0];
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) {
            int64_t acc = 0;
            for (int x = 0; x < k; ++x) acc += a.get_int(i * k + x) * b.get_int(x * m + j);
            EXPECT_EQ(got.get_int(i * m + j), acc);
        }
}

TEST(ReferenceMatmul, ConditionalReductionWithBoundedAxis) {
    // Lower-triangular sum: C[i] = sum_{r <= i} A[r], via the reduction's condition.
    const int n = 12;
    Tensor A = placeholder({n}, Float(32), "A");
    IterVar r = reduce_axis({0, n}, "r");
    Tensor C = compute(
        {n}, [&](Var i) { return sum(A(r), {r}, r.var() <= i); }, "C");
    HostArray a = HostArray::random(Float(32), {n}, 25);
    HostArray got = evaluate_reference({C}, {{A, a}})[0];
    double acc = 0;
    for (int i = 0; i < n; ++i) {
        acc += a.get(i);
        EXPECT_DOUBLE_EQ(got.get(i), acc);
    }
}

TEST(ReferenceMatmul, Size128) {
    const int s = 128;
    Tensor A = placeholder({s, s}, Float(32), "A");
    Tensor B = placeholder({s, s}, Float(32), "B");
    IterVar r = reduce_axis({0, s}, "r");
    Tensor C = compute(
        {s, s}, [&](Var i, Var j) { return sum(A(i, r) * B(r, j), {r}); }, "C");
    HostArray a = HostArray::random(Float(32), {s, s}, 26);
    HostArray b = HostArray::random(Float(32), {s, s}, 27);
    HostArray got = evaluate_reference({C}, {{A, a}, {B, b}})[0];
    EXPECT_CLOSE_TO_REFERENCE(got, matmul_loops(a, b, s, s, s), tolerance_for(Float(64), s));
}
