// CUDA codegen: cross-thread reductions (thread_allreduce). A power-of-two group along
// threadIdx.x reduces with warp shuffles (and shared memory across warps); other groups through a
// shared array; argmax reduces a value and an index together.
#include "codegen/CudaTestUtil.h"
#include "tessel/ir/IROperator.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

// Softmax with one block per row and `threads` threads reducing each row's max and sum.
Schedule softmax(int n, int m, int threads, Tensor* X, Tensor* Y) {
    *X = placeholder({n, m}, Float(32), "X");
    IterVar k1 = reduce_axis({0, m}, "k1"), k2 = reduce_axis({0, m}, "k2");
    Tensor M = compute(
        {n}, [&](Var i) { return max((*X)(i, k1), {k1}); }, "M");
    Tensor E = compute(
        {n, m}, [&](Var i, Var j) { return exp((*X)(i, j) - M(i)); }, "E");
    Tensor S = compute(
        {n}, [&](Var i) { return sum(E(i, k2), {k2}); }, "S");
    *Y = compute(
        {n, m}, [&](Var i, Var j) { return E(i, j) / S(i); }, "Y");
    Schedule s = create_schedule({*Y});
    int mm = s.stage_of(M), e = s.stage_of(E), ss = s.stage_of(S), y = s.stage_of(*Y);
    s.compute_inline(e);
    s.bind(y, 0, IterAnnotation::BlockX);
    s.split(y, 1, threads);
    s.bind(y, 2, IterAnnotation::ThreadX);
    for (int st : {ss, mm}) {
        s.compute_at(st, y, 0);
        s.set_scope(st, StorageScope::Shared);
        s.split(st, 1, threads);
        s.bind(st, 2, IterAnnotation::ThreadX);
    }
    return s;
}

}  // namespace

TEST(CudaCrossThreadReduction, SoftmaxWarpShuffles) {
    Tensor X, Y;
    Schedule s = softmax(64, 256, 128, &X, &Y);
    CudaOutput out = expect_cuda_compiles(s, {X, Y});
    const std::string& src = out.code.source;
    EXPECT_TRUE(contains(src, "__shfl_xor_sync")) << src;
    EXPECT_TRUE(contains(src, "__syncthreads();")) << src;
    EXPECT_TRUE(contains(src, "__launch_bounds__(128)")) << src;
    EXPECT_TRUE(contains(src, "__shared__")) << src;
    ASSERT_EQ(out.code.plan.launches.size(), 1u);
    EXPECT_EQ(out.code.plan.launches[0].grid[0], LaunchExpr::constant(64));
    EXPECT_EQ(out.code.plan.launches[0].block[0], LaunchExpr::constant(128));
}

TEST(CudaCrossThreadReduction, SoftmaxSmallGroup) {
    Tensor X, Y;
    Schedule s = softmax(6, 40, 16, &X, &Y);
    CudaOutput out = expect_cuda_compiles(s, {X, Y});
    EXPECT_TRUE(contains(out.code.source, "__shfl_xor_sync(65535u")) << out.code.source;
}

TEST(CudaCrossThreadReduction, NonPowerOfTwoGroupUsesSharedMemory) {
    Tensor X, Y;
    Schedule s = softmax(6, 48, 24, &X, &Y);
    CudaOutput out = expect_cuda_compiles(s, {X, Y});
    EXPECT_FALSE(contains(out.code.source, "__shfl_xor_sync(0")) << out.code.source;
    EXPECT_TRUE(contains(out.code.source, "tsl_member")) << out.code.source;
}

TEST(CudaCrossThreadReduction, Argmax) {
    const int n = 6, m = 256;
    Tensor X = placeholder({n, m}, Float(32), "X");
    IterVar k = reduce_axis({0, m}, "k");
    std::vector<Tensor> r = compute_multi(
        {n}, [&](const std::vector<Var>& v) { return argmax(k.var(), X(v[0], k), {k}); },
        "argmax");
    Schedule s = create_schedule(r);
    int st = s.stage_of(r[0]);
    s.bind(st, 0, IterAnnotation::BlockX);
    s.split(st, 1, 64);
    s.bind(st, 2, IterAnnotation::ThreadX);
    CudaOutput out = expect_cuda_compiles(s, {X, r[0], r[1]});
    const std::string& src = out.code.source;
    EXPECT_TRUE(contains(src, "__shfl_xor_sync")) << src;
    EXPECT_TRUE(contains(src, "tsl_red_buf")) << src;  // 64 threads: two warps
    ASSERT_EQ(out.code.plan.launches.size(), 1u);
    EXPECT_EQ(out.code.plan.launches[0].params.size(), 3u);
}
