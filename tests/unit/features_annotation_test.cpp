// Features, group 1b: vectorize / unroll / parallel loops around a store (count, product of
// extents, the innermost one's extent and position) and the GPU launch extents. Values worked
// out by hand from the printed IR.
#include "tessel/ir/IROperator.h"
#include "unit/FeaturesTestUtil.h"

using namespace tessel;
using tessel::testing::Gemm;
using tessel::testing::raw_features;
using tessel::testing::RawFeatures;

namespace {

// Exactly one position column of `kind` ("vec", "unroll", "parallel") is set: `position`.
void expect_position(const RawFeatures& f, int row, const std::string& kind,
                     const std::string& position) {
    for (const char* p : {"none", "inner_spatial", "middle_spatial", "outer_spatial",
                          "inner_reduce", "middle_reduce", "outer_reduce", "mixed"})
        EXPECT_FEATURE(f, row, kind + "_pos." + p, p == position ? 1 : 0);
}

// 16^3 GEMM: i j k -> i jo ji ko ki -> i jo ko ki ji (ji vectorised, ki unrolled, i parallel).
Schedule annotated_gemm(const Gemm& g) {
    Schedule s = create_schedule({g.C});
    int c = s.stage_of(g.C);
    s.split(c, 1, 4);               // i jo ji k
    s.split(c, 3, 4);               // i jo ji ko ki
    s.reorder(c, {0, 1, 3, 4, 2});  // i jo ko ki ji
    s.vectorize(c, 4);
    s.unroll(c, 3);
    s.parallel(c, 0);
    return s;
}

}  // namespace

TEST(FeaturesAnnotation, CountsProductsLengthsAndPositions) {
    Gemm g(16);
    RawFeatures f = raw_features(annotated_gemm(g), g.args());
    ASSERT_EQ(f.m.rows, 2);
    // The update: i(16, parallel) jo(4) ko(4) ki(4, unrolled) ji(4, vectorised). Spatial loops
    // (in C's indices): i, jo, ji; reduction loops: ko, ki.
    EXPECT_FEATURE(f, 1, "vec_num", 1);
    EXPECT_FEATURE(f, 1, "vec_prod", 4);
    EXPECT_FEATURE(f, 1, "vec_len", 4);
    expect_position(f, 1, "vec", "inner_spatial");
    EXPECT_FEATURE(f, 1, "unroll_num", 1);
    EXPECT_FEATURE(f, 1, "unroll_len", 4);
    expect_position(f, 1, "unroll", "inner_reduce");
    EXPECT_FEATURE(f, 1, "parallel_num", 1);
    EXPECT_FEATURE(f, 1, "parallel_prod", 16);
    EXPECT_FEATURE(f, 1, "parallel_len", 16);
    expect_position(f, 1, "parallel", "outer_spatial");
    EXPECT_FEATURE(f, 1, "num_loops", 5);
    // The init has no reduction loops: i(16, parallel) jo(4) ji(4, vectorised); nothing unrolled.
    EXPECT_FEATURE(f, 0, "unroll_num", 0);
    EXPECT_FEATURE(f, 0, "unroll_prod", 0);
    expect_position(f, 0, "unroll", "none");
    expect_position(f, 0, "vec", "inner_spatial");
    EXPECT_FEATURE(f, 0, "num_loops", 3);
}

TEST(FeaturesAnnotation, SeveralLoopsOfOneKindAndMiddlePositions) {
    // Unroll jo (spatial) and ki (reduction): two loops, product 16, the innermost (ki) has
    // length 4, and their classes differ: mixed.
    Gemm g(16);
    Schedule s = create_schedule({g.C});
    int c = s.stage_of(g.C);
    s.split(c, 1, 4);
    s.split(c, 3, 4);
    s.reorder(c, {0, 1, 3, 4, 2});  // i jo ko ki ji
    s.unroll(c, 1);
    s.unroll(c, 3);
    RawFeatures f = raw_features(s, g.args());
    EXPECT_FEATURE(f, 1, "unroll_num", 2);
    EXPECT_FEATURE(f, 1, "unroll_prod", 16);
    EXPECT_FEATURE(f, 1, "unroll_len", 4);
    expect_position(f, 1, "unroll", "mixed");
    expect_position(f, 1, "vec", "none");

    // Parallel jo: a spatial loop between i and ji (middle); unrolled ko: the outer reduction.
    Schedule t = create_schedule({g.C});
    t.split(c, 1, 4);
    t.split(c, 3, 4);
    t.reorder(c, {0, 1, 3, 4, 2});  // i jo ko ki ji
    t.parallel(c, 1);               // jo: between i and ji
    t.unroll(c, 2);                 // ko: the outer reduction loop
    RawFeatures h = raw_features(t, g.args());
    expect_position(h, 1, "parallel", "middle_spatial");
    expect_position(h, 1, "unroll", "outer_reduce");
}

TEST(FeaturesAnnotation, LoopsAroundALocalBufferAreSpatial) {
    // C.local computed at C's i.outer: the loop i.outer encloses C.local's allocation, so it is
    // spatial for C.local's stores although C.local's indices do not use it.
    Gemm g(16);
    Schedule s = create_schedule({g.C});
    int cl = s.cache_write(s.stage_of(g.C), "local"), c = cl + 1;
    s.split(c, 0, 4);  // io ii j
    s.compute_at(cl, c, 0);
    s.parallel(c, 0);
    RawFeatures f = raw_features(s, g.args());
    ASSERT_EQ(f.m.rows, 3);
    expect_position(f, 1, "parallel", "outer_spatial");
}

TEST(FeaturesAnnotation, GpuLaunchExtents) {
    // B = A + 1 over 1024 elements: i -> (bx 8, vthread 2, tx 64) on a GPU target.
    Tensor A = placeholder({1024}, Float(32), "A");
    Tensor B = compute(
        {1024}, [&](Var i) { return A(i) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    int b = s.stage_of(B);
    s.split(b, 0, 128);  // bx rest
    s.split(b, 1, 64);   // bx v tx
    s.bind(b, 0, IterAnnotation::BlockX);
    s.bind(b, 1, IterAnnotation::VThread);
    s.bind(b, 2, IterAnnotation::ThreadX);
    RawFeatures f = raw_features(s, {A, B}, Target("cuda -arch=sm_80"));
    ASSERT_EQ(f.m.rows, 1);
    EXPECT_FEATURE(f, 0, "is_gpu", 1);
    EXPECT_FEATURE(f, 0, "blockIdx_x_len", 8);
    EXPECT_FEATURE(f, 0, "blockIdx_y_len", 1);
    EXPECT_FEATURE(f, 0, "blockIdx_z_len", 1);
    EXPECT_FEATURE(f, 0, "threadIdx_x_len", 64);
    EXPECT_FEATURE(f, 0, "threadIdx_y_len", 1);
    EXPECT_FEATURE(f, 0, "threadIdx_z_len", 1);
    EXPECT_FEATURE(f, 0, "vthread_len", 2);
    EXPECT_FEATURE(f, 0, "outer_prod", 1024);

    RawFeatures cpu = raw_features(create_schedule({B}), {A, B});
    EXPECT_FEATURE(cpu, 0, "is_gpu", 0);
    EXPECT_FEATURE(cpu, 0, "blockIdx_x_len", 1);
    EXPECT_FEATURE(cpu, 0, "vthread_len", 1);
}
