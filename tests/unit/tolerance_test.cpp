// Tolerance scaling and comparison with a reference.
#include <gtest/gtest.h>

#include <cmath>

#include "tessel/Tolerance.h"

using namespace tessel;

TEST(Tolerance, ScalesWithEpsilonAndReductionLength) {
    Tolerance f32 = tolerance_for(Float(32));
    Tolerance f16 = tolerance_for(Float(16));
    EXPECT_DOUBLE_EQ(f32.rtol, 8 * Float(32).epsilon());
    EXPECT_DOUBLE_EQ(f32.atol, 2 * Float(32).epsilon());
    EXPECT_GT(f16.rtol, 1000 * f32.rtol);
    Tolerance k = tolerance_for(Float(32), 1024, 3.0);
    EXPECT_DOUBLE_EQ(k.rtol, 4 * Float(32).epsilon() * 33);
    EXPECT_DOUBLE_EQ(k.atol, 2 * Float(32).epsilon() * 1024 * 3.0);
    Tolerance i = tolerance_for(Int(32), 100);
    EXPECT_EQ(i.rtol, 0.0);
    EXPECT_EQ(i.atol, 0.0);
    EXPECT_DOUBLE_EQ(f32.scaled(2).rtol, 2 * f32.rtol);
}

TEST(Tolerance, Float32SumsOfRandomTermsPass) {
    // A float32 dot product in sequential order against the double one, for many outputs.
    const int K = 512, N = 2000;
    HostArray x = HostArray::random(Float(32), {N, K}, 11);
    HostArray y = HostArray::random(Float(32), {N, K}, 12);
    HostArray got(Float(32), {N}), ref(Float(32), {N}, ArrayStorage::Ideal);
    for (int n = 0; n < N; ++n) {
        float acc = 0;
        double exact = 0;
        for (int k = 0; k < K; ++k) {
            acc += static_cast<float>(x.get(n * K + k)) * static_cast<float>(y.get(n * K + k));
            exact += x.get(n * K + k) * y.get(n * K + k);
        }
        got.set(n, acc);
        ref.set(n, exact);
    }
    EXPECT_CLOSE_TO_REFERENCE(got, ref, tolerance_for(Float(32), K));
    // A float16 result of the same sums passes the float16 tolerance, not the float32 one.
    HostArray h16(Float(16), {N});
    for (int n = 0; n < N; ++n) h16.set(n, ref.get(n));
    EXPECT_CLOSE_TO_REFERENCE(h16, ref, tolerance_for(Float(16), K));
    EXPECT_FALSE(compare_to_reference(h16, ref, tolerance_for(Float(32), K)).ok);
}

TEST(Tolerance, ReportsWorstElement) {
    HostArray ref = HostArray::from_values(Float(32), {2, 2}, {1, 2, 3, 4}, ArrayStorage::Ideal);
    HostArray got = HostArray::from_values(Float(32), {2, 2}, {1, 2.5, 3, 4.001});
    CompareResult r = compare_to_reference(got, ref, tolerance_for(Float(32)));
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.mismatches, 2);
    EXPECT_EQ(r.total, 4);
    EXPECT_EQ(r.worst_index, (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(r.worst_actual, 2.5);
    EXPECT_EQ(r.worst_expected, 2.0);
    EXPECT_NE(r.message().find("[0, 1]"), std::string::npos) << r.message();
    EXPECT_TRUE(compare_to_reference(got, ref, {0.5, 0}).ok);
}

TEST(Tolerance, NanInfAndShapes) {
    HostArray a = HostArray::from_values(Float(32), {3}, {NAN, INFINITY, 1});
    HostArray b = HostArray::from_values(Float(32), {3}, {NAN, INFINITY, 1});
    EXPECT_TRUE(compare_to_reference(a, b, tolerance_for(Float(32))).ok);
    HostArray c = HostArray::from_values(Float(32), {3}, {1, INFINITY, 1});
    EXPECT_FALSE(compare_to_reference(c, b, {1e9, 1e9}).ok);
    HostArray d = HostArray::from_values(Float(32), {3}, {NAN, -INFINITY, 1});
    EXPECT_FALSE(compare_to_reference(d, b, {1e9, 1e9}).ok);
    HostArray e = HostArray::from_values(Float(32), {1, 3}, {NAN, INFINITY, 1});
    CompareResult r = compare_to_reference(e, b, {1, 1});
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.message().find("shape"), std::string::npos);
}

TEST(Tolerance, IntegersExact) {
    HostArray a = HostArray::from_values(Int(8), {2}, {1, -3});
    HostArray b = HostArray::from_values(Int(8), {2}, {1, -4});
    EXPECT_FALSE(compare_to_reference(a, b, tolerance_for(Int(8))).ok);
    EXPECT_TRUE(compare_to_reference(a, a, tolerance_for(Int(8))).ok);
}
