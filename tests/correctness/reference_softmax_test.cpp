// Reference interpreter: softmax as four computes (max, exp, sum, divide).
#include <gtest/gtest.h>

#include <cmath>

#include "tessel/Tolerance.h"
#include "tessel/te/Operation.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;

TEST(ReferenceSoftmax, FourComputes) {
    const int n = 9, m = 33;
    Tensor X = placeholder({n, m}, Float(32), "X");
    IterVar k1 = reduce_axis({0, m}, "k1");
    Tensor mx = compute(
        {n}, [&](Var i) { return max(X(i, k1), {k1}); }, "mx");
    Tensor e = compute(
        {n, m}, [&](Var i, Var j) { return exp(X(i, j) - mx(i)); }, "e");
    IterVar k2 = reduce_axis({0, m}, "k2");
    Tensor s = compute(
        {n}, [&](Var i) { return sum(e(i, k2), {k2}); }, "s");
    Tensor out = compute(
        {n, m}, [&](Var i, Var j) { return e(i, j) / s(i); }, "softmax");
    HostArray x = HostArray::random(Float(32), {n, m}, 41, -5, 5);
    std::vector<HostArray> got = evaluate_reference({out, mx}, {{X, x}});
    HostArray expect(Float(32), {n, m}, ArrayStorage::Ideal);
    for (int i = 0; i < n; ++i) {
        double row_max = -INFINITY, total = 0;
        for (int j = 0; j < m; ++j) row_max = std::max(row_max, x.at({i, j}));
        EXPECT_EQ(got[1].get(i), row_max);
        for (int j = 0; j < m; ++j) total += std::exp(x.at({i, j}) - row_max);
        double row_sum = 0;
        for (int j = 0; j < m; ++j) {
            double v = std::exp(x.at({i, j}) - row_max) / total;
            expect.set(i * m + j, v);
            row_sum += v;
        }
        EXPECT_NEAR(row_sum, 1.0, 1e-12);
    }
    EXPECT_CLOSE_TO_REFERENCE(got[0], expect, tolerance_for(Float(64), m));
}
