// Features, groups 3 to 5: the arithmetic-intensity curve, the allocation of the stored buffer,
// and the loops around the store. Values worked out by hand from the printed IR.
#include "unit/FeaturesTestUtil.h"

using namespace tessel;
using tessel::testing::Gemm;
using tessel::testing::raw_features;
using tessel::testing::RawFeatures;

TEST(FeaturesIntensity, GemmUpdateCurve) {
    // The update of a 16^3 GEMM in i0(16) i1.outer(4) k(16) i1.inner(4), 2 flops a time. Level by
    // level from the innermost (flops; footprint bytes of C + A + B; x = log2 flops,
    // y = flops / bytes):
    //   one execution:    2 ;  4 +    4 +    4 =   12 ; x = 1,  y = 1/6
    //   i1.inner:         8 ; 16 +    4 +   16 =   36 ; x = 3,  y = 2/9
    //   k:              128 ; 16 +   64 +  256 =  336 ; x = 7,  y = 8/21
    //   i1.outer:       512 ; 64 +   64 + 1024 = 1152 ; x = 9,  y = 4/9
    //   i0:            8192 ; 1024 + 1024 + 1024       ; x = 13, y = 8/3
    // Samples at x = 1.3, 2.6, ..., 13, interpolated linearly.
    Gemm g(16);
    Schedule s = create_schedule({g.C});
    int c = s.stage_of(g.C);
    s.split(c, 1, 4);
    s.reorder(c, {0, 1, 3, 2});
    RawFeatures f = raw_features(s, g.args());
    auto at = [](double x0, double y0, double x1, double y1, double x) {
        return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
    };
    EXPECT_FEATURE(f, 1, "arith_intensity_curve_0", at(1, 1.0 / 6, 3, 2.0 / 9, 1.3));
    EXPECT_FEATURE(f, 1, "arith_intensity_curve_1", at(1, 1.0 / 6, 3, 2.0 / 9, 2.6));
    EXPECT_FEATURE(f, 1, "arith_intensity_curve_2", at(3, 2.0 / 9, 7, 8.0 / 21, 3.9));
    EXPECT_FEATURE(f, 1, "arith_intensity_curve_5", at(7, 8.0 / 21, 9, 4.0 / 9, 7.8));
    EXPECT_FEATURE(f, 1, "arith_intensity_curve_7", at(9, 4.0 / 9, 13, 8.0 / 3, 10.4));
    EXPECT_FEATURE(f, 1, "arith_intensity_curve_9", 8.0 / 3);
    // The init computes no float operation: no curve.
    for (int i = 0; i < kIntensityCurvePoints; ++i)
        EXPECT_FEATURE(f, 0, "arith_intensity_curve_" + std::to_string(i), 0);
}

TEST(FeaturesAllocation, LocalBufferAtATile) {
    // C.local computed at C's i.outer (4 iterations): allocate C.local[4, 16] there (256 bytes);
    // its update runs i.outer(4) i(4) j(16) k(16) = 4096 times, 1024 per allocation.
    Gemm g(16);
    Schedule s = create_schedule({g.C});
    int cl = s.cache_write(s.stage_of(g.C), "local"), c = cl + 1;
    s.split(c, 0, 4);
    s.compute_at(cl, c, 0);
    s.pragma_auto_unroll(cl, 16);
    RawFeatures f = raw_features(s, g.args());
    ASSERT_EQ(f.m.rows, 3);  // C.local init, C.local update, C = C.local
    EXPECT_FEATURE(f, 1, "alloc_size", 256);
    EXPECT_FEATURE(f, 1, "alloc_prod", 64 * 4);
    EXPECT_FEATURE(f, 1, "alloc_outer_prod", 4);
    EXPECT_FEATURE(f, 1, "alloc_inner_prod", 1024);
    EXPECT_FEATURE(f, 1, "outer_prod", 4096);
    EXPECT_FEATURE(f, 1, "num_loops", 4);
    EXPECT_FEATURE(f, 1, "auto_unroll_max_step", 16);
    // C itself is a kernel argument: no allocation; its copy loops io(4) ii(4) j(16) have no
    // pragma.
    for (const char* n : {"alloc_size", "alloc_prod", "alloc_outer_prod", "alloc_inner_prod"})
        EXPECT_FEATURE(f, 2, n, 0);
    EXPECT_FEATURE(f, 2, "outer_prod", 256);
    EXPECT_FEATURE(f, 2, "num_loops", 3);
    EXPECT_FEATURE(f, 2, "auto_unroll_max_step", 0);
}
