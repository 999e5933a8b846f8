// reverse_compute_at's split-K in one kernel (passes/reverse_compute_at_test.cpp): the CUDA
// source arrives on a counter per tile (fence, barrier, one atomic add, the last block told by
// __syncthreads_or) kept in a zeroed workspace of the launch plan, and NVRTC compiles it.
#include <gtest/gtest.h>

#include "codegen/CudaTestUtil.h"

namespace tessel {
namespace {

bool mentions(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(ReverseComputeAt, CudaSourceArrivesAndCompiles) {
    testing::SplitKProduct w(3, 6);
    testing::CudaOutput out = testing::expect_cuda_compiles(w.s, {w.A, w.B, w.Y});
    const std::string& src = out.code.source;
    EXPECT_TRUE(mentions(src, "atomicAdd(")) << src;
    EXPECT_TRUE(mentions(src, "__syncthreads_or(")) << src;
    EXPECT_TRUE(mentions(src, "__threadfence();")) << src;
    // Two workspaces: P's partial sums, fresh each call, and the counters, kept zero.
    ASSERT_EQ(out.code.plan.workspaces.size(), 2u);
    for (const CudaWorkspace& ws : out.code.plan.workspaces)
        EXPECT_EQ(ws.zeroed, mentions(ws.name, ".arrivals")) << ws.name;
}

}  // namespace
}  // namespace tessel
