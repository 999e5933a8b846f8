// CUDA codegen: the shared-memory tiled GEMM: shared tiles hoisted to __shared__ arrays,
// barriers around their loads, a 2-D grid and block.
#include <regex>

#include "codegen/CudaTestUtil.h"
#include "correctness/SharedGemm.h"

using namespace tessel;
using namespace tessel::testing;

TEST(CudaSharedGemm, TiledWithBarriers) {
    SharedGemm g(256, 128, 64, 16);
    CudaOutput out = expect_cuda_compiles(g.s, {g.A, g.B, g.C});
    const std::string& src = out.code.source;
    EXPECT_TRUE(contains(src, "__shared__ __align__(16) float As")) << src;
    EXPECT_TRUE(contains(src, "__syncthreads();")) << src;
    EXPECT_TRUE(contains(src, "__launch_bounds__(256)")) << src;
    ASSERT_EQ(out.code.plan.launches.size(), 1u);
    const CudaLaunch& l = out.code.plan.launches[0];
    EXPECT_EQ(l.grid[0], LaunchExpr::constant(8));
    EXPECT_EQ(l.grid[1], LaunchExpr::constant(16));
    EXPECT_EQ(l.block[0], LaunchExpr::constant(16));
    EXPECT_EQ(l.block[1], LaunchExpr::constant(16));
    EXPECT_EQ(l.dynamic_shared_bytes, LaunchExpr::constant(0));
}

TEST(CudaSharedGemm, LargeTilesUseDynamicSharedMemory) {
    // Two 32 x 256 float tiles would be 64 KB: over the 48 KB of static shared memory.
    Tensor A = placeholder({64, 256}, Float(32), "A");
    Tensor As = compute(
        {64, 256}, [&](Var i, Var k) { return A(i, k); }, "As");
    Tensor Bs = compute(
        {64, 256}, [&](Var i, Var k) { return A(i, k) * 2.0f; }, "Bs");
    Tensor C = compute(
        {64, 256}, [&](Var i, Var k) { return As(i, k) + Bs(i, k); }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.split(c, 0, 32);  // io ii k
    s.bind(c, 0, IterAnnotation::BlockX);
    s.bind(c, 1, IterAnnotation::ThreadY);
    s.split(c, 2, 32);  // io ii ko ki
    s.bind(c, 3, IterAnnotation::ThreadX);
    for (Tensor t : {As, Bs}) {
        int st = s.stage_of(t);
        s.set_scope(st, StorageScope::Shared);
        s.compute_at(st, c, 0);
        s.split(st, 1, 32);  // i ko ki
        s.bind(st, 0, IterAnnotation::ThreadY);
        s.bind(st, 2, IterAnnotation::ThreadX);
    }
    CudaOutput out = expect_cuda_compiles(s, {A, C});
    const std::string& src = out.code.source;
    EXPECT_TRUE(contains(src, "extern __shared__")) << src;
    ASSERT_EQ(out.code.plan.launches.size(), 1u);
    EXPECT_EQ(out.code.plan.launches[0].dynamic_shared_bytes, LaunchExpr::constant(65536));
}

// short_shared_addresses: every float32 shared access goes through a 32-bit shared address (as
// nvcc's code does), none through the 64-bit generic arithmetic NVRTC's code uses otherwise.
TEST(CudaSharedGemm, ShortSharedAddressesAre32Bit) {
    if (!internal::has_nvrtc()) GTEST_SKIP() << "tessel built without the CUDA backend (NVRTC)";
    SharedGemm g(256, 128, 64, 16);
    LoweredFunc f = lower(g.s, {g.A, g.B, g.C}, cuda_test_target(), "main");
    std::vector<Var> shape_vars;
    internal::make_signature(f, {}, DeviceType::CUDA, "cuda", &shape_vars);
    std::regex wide(R"((ld|st)\.shared\.[a-z0-9.]+\s[^;]*\[%rd)");
    std::regex short_(R"((ld|st)\.shared\.[a-z0-9.]+\s[^;]*\[%r[0-9])");
    for (bool on : {false, true}) {
        internal::CudaCodegenOptions options;
        options.short_shared_addresses = on;
        internal::CudaCode code = internal::codegen_cuda(f, shape_vars, options);
        EXPECT_EQ(contains(code.source, "__cvta_generic_to_shared(As)"), on) << code.source;
        std::string ptx = internal::nvrtc_compile(code.source, "sm_90", {}).ptx;
        EXPECT_EQ(std::regex_search(ptx, wide), !on) << ptx;
        EXPECT_EQ(std::regex_search(ptx, short_), on) << ptx;
    }
}
