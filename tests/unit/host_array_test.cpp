// HostArray: typed storage, conversions, bounds checks and seeded random filling.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "tessel/Error.h"
#include "tessel/HostArray.h"
#include "tessel/ir/IR.h"

using namespace tessel;

TEST(HostArray, NativeStorageIsTheDtypesBytes) {
    HostArray a = HostArray::from_values(Float(16), {3}, {1.0, -2.0, 0.1});
    EXPECT_EQ(a.nbytes(), 6u);
    uint16_t bits[3];
    std::memcpy(bits, a.data(), 6);
    EXPECT_EQ(bits[0], 0x3c00);
    EXPECT_EQ(bits[1], 0xc000);
    EXPECT_EQ(a.get(2), round_to_float_type(0.1, Float(16)));
    HostArray b = HostArray::from_values(BFloat(16), {1}, {1.0});
    std::memcpy(bits, b.data(), 2);
    EXPECT_EQ(bits[0], 0x3f80);
    HostArray f = HostArray::from_values(Float(32), {1}, {0.1});
    EXPECT_EQ(f.nbytes(), 4u);
    EXPECT_EQ(f.get(0), static_cast<double>(0.1f));
}

TEST(HostArray, Float16RoundTripsEveryValue) {
    HostArray a(Float(16), {1});
    for (uint32_t h = 0; h < 0x10000; ++h) {
        uint16_t bits = static_cast<uint16_t>(h);
        std::memcpy(a.data(), &bits, 2);
        double v = a.get(0);
        a.set(0, v);
        uint16_t back;
        std::memcpy(&back, a.data(), 2);
        if (std::isnan(v)) continue;
        ASSERT_EQ(back, bits) << "half bits " << h << " value " << v;
    }
}

TEST(HostArray, IdealStorageKeepsDoubles) {
    HostArray a(Float(16), {2}, ArrayStorage::Ideal);
    EXPECT_TRUE(a.holds_doubles());
    a.set(0, 0.1);
    EXPECT_EQ(a.get(0), 0.1);
    EXPECT_EQ(a.with_storage(ArrayStorage::Native).get(0), round_to_float_type(0.1, Float(16)));
    HostArray i(Int(8), {1}, ArrayStorage::Ideal);
    EXPECT_FALSE(i.holds_doubles());
    EXPECT_EQ(i.nbytes(), 1u);
}

TEST(HostArray, IntegersWrapAndSaturate) {
    HostArray a(Int(8), {3});
    a.set_int(0, 300);
    a.set(1, 1000.7);
    a.set(2, -2.9);
    EXPECT_EQ(a.get_int(0), 44);
    EXPECT_EQ(a.get_int(1), 127);
    EXPECT_EQ(a.get_int(2), -2);
    HostArray u(UInt(64), {1});
    u.set_int(0, -1);
    EXPECT_EQ(static_cast<uint64_t>(u.get_int(0)), ~uint64_t(0));
    EXPECT_EQ(u.get(0), 18446744073709551616.0);
}

TEST(HostArray, NotZeroByDefault) {
    HostArray f(Float(32), {4});
    EXPECT_TRUE(std::isnan(f.get(3)));
    HostArray i(Int(32), {4});
    EXPECT_NE(i.get_int(0), 0);
}

TEST(HostArray, BoundsCheckedIndexing) {
    HostArray a = HostArray::full(Float(32), {2, 3}, 1.5);
    EXPECT_EQ(a.offset_of({1, 2}), 5);
    EXPECT_EQ(a.at({1, 2}), 1.5);
    EXPECT_EQ(a.index_of(4), (std::vector<int64_t>{1, 1}));
    try {
        a.offset_of({2, 0}, "tensor 'A'");
        FAIL();
    } catch (const RuntimeError& e) {
        std::string m = e.what();
        EXPECT_NE(m.find("'A'"), std::string::npos) << m;
        EXPECT_NE(m.find("[2, 0]"), std::string::npos) << m;
        EXPECT_NE(m.find("[2, 3]"), std::string::npos) << m;
    }
    EXPECT_THROW(a.offset_of({0}), RuntimeError);
    EXPECT_THROW(HostArray(Float(32, 4), {1}), RuntimeError);
}

TEST(HostArray, RandomIsSeededAndInRange) {
    HostArray a = HostArray::random(Float(32), {1000}, 7);
    HostArray b = HostArray::random(Float(32), {1000}, 7);
    HostArray c = HostArray::random(Float(32), {1000}, 8);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0);
    EXPECT_NE(std::memcmp(a.data(), c.data(), a.nbytes()), 0);
    double lo = 1, hi = -1;
    for (int64_t i = 0; i < a.size(); ++i) {
        lo = std::min(lo, a.get(i));
        hi = std::max(hi, a.get(i));
    }
    EXPECT_GE(lo, -1.0);
    EXPECT_LE(hi, 1.0);
    EXPECT_LT(lo, -0.9);
    EXPECT_GT(hi, 0.9);
    HostArray i8 = HostArray::random(Int(8), {1000}, 3, -200, 200);
    bool saw_min = false, saw_max = false;
    for (int64_t i = 0; i < i8.size(); ++i) {
        saw_min = saw_min || i8.get_int(i) == -128;
        saw_max = saw_max || i8.get_int(i) == 127;
    }
    EXPECT_TRUE(saw_min && saw_max);
    HostArray u = HostArray::random(UInt(8), {100}, 3);
    for (int64_t i = 0; i < u.size(); ++i) EXPECT_LE(u.get_int(i), 10);
}
