// CUDA codegen: the shared-memory tiled GEMM: shared tiles hoisted to __shared__ arrays,
// barriers around their loads, a 2-D grid and block.
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
