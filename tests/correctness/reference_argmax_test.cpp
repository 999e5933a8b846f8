// Reference interpreter: argmax / argmin (two-value reductions), ties to the lowest index.
#include <gtest/gtest.h>

#include <cmath>

#include "tessel/te/Operation.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;

namespace {

void check_arg(bool want_max) {
    const int n = 40, m = 12;
    Tensor X = placeholder({n, m}, Float(32), "X");
    IterVar k = reduce_axis({0, m}, "k");
    std::vector<Tensor> r = compute_multi(
        {n},
        [&](const std::vector<Var>& v) {
            return want_max ? argmax(k.var(), X(v[0], k), {k}) : argmin(k.var(), X(v[0], k), {k});
        },
        want_max ? "argmax" : "argmin");
    ASSERT_EQ(r.size(), 2u);
    // Values from {0, 1, 2, 3}: most rows have ties for the best value.
    HostArray x = HostArray::random(Float(32), {n, m}, 51, 0, 3.999);
    for (int64_t i = 0; i < x.size(); ++i) x.set(i, std::floor(x.get(i)));
    std::vector<HostArray> got = evaluate_reference(r, {{X, x}});
    int ties = 0;
    for (int i = 0; i < n; ++i) {
        int best = 0, count = 1;
        for (int j = 1; j < m; ++j) {
            double a = x.at({i, j}), b = x.at({i, best});
            if (want_max ? a > b : a < b) {
                best = j;
                count = 1;
            } else if (a == b) {
                ++count;
            }
        }
        ties += count > 1;
        EXPECT_EQ(got[0].get_int(i), best) << "row " << i;
        EXPECT_EQ(got[1].get(i), x.at({i, best})) << "row " << i;
    }
    EXPECT_GT(ties, n / 2);
}

}  // namespace

TEST(ReferenceArgmax, TiesGoToLowestIndex) {
    check_arg(true);
}

TEST(ReferenceArgmin, TiesGoToLowestIndex) {
    check_arg(false);
}

TEST(ReferenceArgmax, SecondOutputAloneAndScalarResult) {
    Tensor X = placeholder({5}, Int(32), "X");
    IterVar k = reduce_axis({0, 5}, "k");
    std::vector<Tensor> r = compute_multi(
        {}, [&](const std::vector<Var>&) { return argmax(k.var(), X(k), {k}); }, "argmax");
    HostArray x = HostArray::from_values(Int(32), {5}, {3, -1, 7, 7, 2});
    std::vector<HostArray> got = evaluate_reference({r[1], r[0]}, {{X, x}});
    EXPECT_EQ(got[0].get_int(0), 7);
    EXPECT_EQ(got[1].get_int(0), 2);
}
