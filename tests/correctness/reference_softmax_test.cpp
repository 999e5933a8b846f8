// Reference interpreter: softmax as four computes (max, exp, sum, divide).
#include <gtest/gtest.h>

#include <cmath>

#include "common/Builders.h"
#include "tessel/Tolerance.h"
#include "tessel/te/Operation.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;
using tessel::testing::Softmax;

TEST(ReferenceSoftmax, FourComputes) {
    const int n = 9, m = 33;
    Softmax sm(n, m);
    HostArray x = HostArray::random(Float(32), {n, m}, 41, -5, 5);
    std::vector<HostArray> got = evaluate_reference({sm.Y, sm.M}, {{sm.X, x}});
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
