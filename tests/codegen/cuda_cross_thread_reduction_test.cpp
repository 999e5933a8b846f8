// CUDA codegen: cross-thread reductions (thread_allreduce). A power-of-two group along
// threadIdx.x reduces with warp shuffles (and shared memory across warps); other groups through a
// shared array; argmax reduces a value and an index together.
#include "codegen/CudaTestUtil.h"
#include "tessel/ir/IROperator.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using namespace tessel::testing;

TEST(CudaCrossThreadReduction, SoftmaxWarpShuffles) {
    Tensor X, Y;
    Schedule s = block_softmax(64, 256, 128, &X, &Y);
    CudaOutput out = expect_cuda_compiles(s, {X, Y});
    const std::string& src = out.code.source;
    EXPECT_TRUE(contains(src, "tsl_shfl_xor(0x")) << src;
    EXPECT_TRUE(contains(src, "__syncthreads();")) << src;
    EXPECT_TRUE(contains(src, "__launch_bounds__(128)")) << src;
    EXPECT_TRUE(contains(src, "__shared__")) << src;
    ASSERT_EQ(out.code.plan.launches.size(), 1u);
    EXPECT_EQ(out.code.plan.launches[0].grid[0], LaunchExpr::constant(64));
    EXPECT_EQ(out.code.plan.launches[0].block[0], LaunchExpr::constant(128));
}

TEST(CudaCrossThreadReduction, SoftmaxSmallGroup) {
    Tensor X, Y;
    Schedule s = block_softmax(6, 40, 16, &X, &Y);
    CudaOutput out = expect_cuda_compiles(s, {X, Y});
    EXPECT_TRUE(contains(out.code.source, "tsl_shfl_xor(65535u")) << out.code.source;
}

TEST(CudaCrossThreadReduction, NonPowerOfTwoGroupUsesSharedMemory) {
    Tensor X, Y;
    Schedule s = block_softmax(6, 48, 24, &X, &Y);
    CudaOutput out = expect_cuda_compiles(s, {X, Y});
    EXPECT_FALSE(contains(out.code.source, "= tsl_shfl_xor(")) << out.code.source;
    EXPECT_TRUE(contains(out.code.source, "tsl_member")) << out.code.source;
}

TEST(CudaCrossThreadReduction, Argmax) {
    const int n = 6, m = 256;
    Tensor X = placeholder({n, m}, Float(32), "X");
    IterVar k = reduce_axis({0, m}, "k");
    std::vector<Tensor> r = compute_multi(
        {n}, [&](const std::vector<Var>& v) { return argmax(k.var(), X(v[0], k), {k}); }, "argmax");
    Schedule s = create_schedule(r);
    int st = s.stage_of(r[0]);
    s.bind(st, 0, IterAnnotation::BlockX);
    s.split(st, 1, 64);
    s.bind(st, 2, IterAnnotation::ThreadX);
    CudaOutput out = expect_cuda_compiles(s, {X, r[0], r[1]});
    const std::string& src = out.code.source;
    EXPECT_TRUE(contains(src, "tsl_shfl_xor(0x")) << src;
    EXPECT_TRUE(contains(src, "red_buf[")) << src;  // 64 threads: two warps
    ASSERT_EQ(out.code.plan.launches.size(), 1u);
    EXPECT_EQ(out.code.plan.launches[0].params.size(), 3u);
}

namespace {

// The line after the all-reduce's store of its result into `dest` (e.g. "M_red[0] = red;"),
// without its indentation.
std::string line_after(const std::string& src, const std::string& dest) {
    size_t at = src.find(dest);
    if (at == std::string::npos) return "(no " + dest + ")";
    size_t begin = src.find('\n', at) + 1, end = src.find('\n', begin);
    std::string line = src.substr(begin, end - begin);
    return line.substr(line.find_first_not_of(' '));
}

int count(const std::string& text, const std::string& part) {
    int n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
}

}  // namespace

// A group within one warp reduces with shuffles alone: no __syncthreads() after it (the barriers
// the kernel keeps are insert_barriers', around the shared M and S). Across warps the reduction
// goes through shared memory and ends with one.
TEST(CudaCrossThreadReduction, NoBarrierAfterAWarpOnlyReduction) {
    Tensor X, Y;
    Schedule s = block_softmax(6, 40, 16, &X, &Y);
    CudaOutput warp = expect_cuda_compiles(s, {X, Y});
    EXPECT_EQ(line_after(warp.code.source, "M_red[0] = red;"), "}") << warp.code.source;
    EXPECT_EQ(line_after(warp.code.source, "S_red[0] = red_1;"), "}") << warp.code.source;
    EXPECT_EQ(count(warp.code.source, "__syncthreads();"), 2) << warp.code.source;

    s = block_softmax(6, 256, 64, &X, &Y);
    CudaOutput block = expect_cuda_compiles(s, {X, Y});
    EXPECT_EQ(line_after(block.code.source, "M_red[0] = red;"), "__syncthreads();")
        << block.code.source;
    EXPECT_EQ(line_after(block.code.source, "S_red[0] = red_1;"), "__syncthreads();")
        << block.code.source;
}
