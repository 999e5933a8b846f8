// CUDA codegen: an elementwise kernel with blockIdx/threadIdx bindings and a vectorized inner
// loop becomes one kernel with float4 accesses, __launch_bounds__ and the right launch plan.
#include "codegen/CudaTestUtil.h"
#include "tessel/ir/IROperator.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using namespace tessel::testing;

TEST(CudaElementwise, VectorizedFloat4) {
    Tensor A = placeholder({1024, 1024}, Float(32), "A");
    Tensor B = placeholder({1024, 1024}, Float(32), "B");
    Tensor C = compute(
        {1024, 1024}, [&](Var i, Var j) { return A(i, j) * 2.0f + B(i, j); }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.split(c, 1, 4);    // i jo ji
    s.split(c, 1, 256);  // i joo joi ji
    s.bind(c, 0, IterAnnotation::BlockY);
    s.bind(c, 1, IterAnnotation::BlockX);
    s.bind(c, 2, IterAnnotation::ThreadX);
    s.vectorize(c, 3);
    CudaOutput out = expect_cuda_compiles(s, {A, B, C});
    const std::string& src = out.code.source;
    EXPECT_TRUE(contains(src, "__launch_bounds__(256)")) << src;
    EXPECT_TRUE(contains(src, "float4")) << src;
    EXPECT_TRUE(contains(src, "const float* __restrict__ A")) << src;
    EXPECT_TRUE(contains(src, "float* __restrict__ C")) << src;
    EXPECT_FALSE(contains(src, "#include")) << src;
    ASSERT_EQ(out.code.plan.launches.size(), 1u);
    const CudaLaunch& l = out.code.plan.launches[0];
    EXPECT_EQ(l.function, "main_kernel0");
    EXPECT_EQ(l.stage, "C");
    EXPECT_EQ(l.grid[0], LaunchExpr::constant(1));
    EXPECT_EQ(l.grid[1], LaunchExpr::constant(1024));
    EXPECT_EQ(l.block[0], LaunchExpr::constant(256));
    EXPECT_EQ(l.block[1], LaunchExpr::constant(1));
    std::vector<CudaParam> params = {{CudaParam::Kind::Buffer, 0},
                                     {CudaParam::Kind::Buffer, 1},
                                     {CudaParam::Kind::Buffer, 2}};
    EXPECT_EQ(l.params, params);
    EXPECT_TRUE(out.code.plan.workspaces.empty());
    EXPECT_EQ(out.code.arg_alignment, (std::vector<int64_t>{16, 16, 16}));
}

TEST(CudaElementwise, InPlaceArgumentIsNotRestrict) {
    Tensor A = placeholder({256}, Float(32), "A");
    Tensor C = compute(
        {256}, [&](Var i) { return exp(A(i)) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.split(c, 0, 64);
    s.bind(c, 0, IterAnnotation::BlockX);
    s.bind(c, 1, IterAnnotation::ThreadX);
    BuildOptions o;
    o.in_place = {"C"};
    CudaOutput out = expect_cuda_compiles(s, {A, C}, o);
    EXPECT_TRUE(contains(out.code.source, "float* C")) << out.code.source;
    EXPECT_TRUE(contains(out.code.source, "expf(")) << out.code.source;
    CudaOutput fast = expect_cuda_compiles(s, {A, C}, {}, true);
    EXPECT_TRUE(contains(fast.code.source, "__expf(")) << fast.code.source;
    EXPECT_EQ(out.code.arg_alignment, (std::vector<int64_t>{4, 4}));
}

TEST(CudaElementwise, IntegerDivisionAndCasts) {
    Tensor A = placeholder({512}, Int(32), "A");
    Tensor F = placeholder({512}, Float(32), "F");
    Tensor C = compute(
        {512},
        [&](Var i) {
            return floordiv(A(i), 7) + floormod(A(i), A((i + 1) % 512)) + cast(Int(32), F(i)) +
                   i / 4;
        },
        "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.split(c, 0, 128);
    s.bind(c, 0, IterAnnotation::BlockX);
    s.bind(c, 1, IterAnnotation::ThreadX);
    CudaOutput out = expect_cuda_compiles(s, {A, F, C});
    const std::string& src = out.code.source;
    EXPECT_TRUE(contains(src, "tsl_floordiv(")) << src;  // A may be negative
    EXPECT_TRUE(contains(src, "tsl_floormod(")) << src;
    EXPECT_TRUE(contains(src, "__float2int_rz(")) << src;
}
