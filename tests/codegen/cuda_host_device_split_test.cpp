// CUDA codegen: the host/device split of hand-written lowered IR: host lets, ifs and asserts move
// into the kernels in their scope, a loop-free store becomes a one-thread kernel, and a shared
// buffer of non-constant size is a CompileError.
#include <gtest/gtest.h>

#include "codegen/CudaTestUtil.h"
#include "tessel/ir/IROperator.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

// for b in blockIdx.x(0, blocks): for t in threadIdx.x(0, 64): C[b * 64 + t] = value
Stmt kernel(const Buffer& c, Expr blocks, Expr value) {
    Var b("b"), t("t");
    Stmt store = Store::make(c->data, value, b * 64 + t);
    Stmt threads = For::make(t, 0, 64, ForKind::ThreadBound, store, "threadIdx.x");
    return For::make(b, 0, blocks, ForKind::ThreadBound, threads, "blockIdx.x");
}

}  // namespace

TEST(CudaHostDeviceSplit, HostLetIfAndAssertMoveIntoKernels) {
    Var n("n");
    Buffer c("C", Float(32), {n});
    Var half("half");
    Stmt body = Seq::make({AssertStmt::make(n > 0, "n must be positive"),
                           kernel(c, floordiv(n, 64), 1.0f), Store::make(c->data, 2.0f, 0)});
    body = IfThenElse::make(n > 64, LetStmt::make(half, floordiv(n, 2), body));
    LoweredFunc f{"f", {c}, body};
    internal::CudaCode code = internal::codegen_cuda(split_for_cuda(f), {n}, {});
    ASSERT_EQ(code.plan.launches.size(), 2u);
    int64_t n_value = 640;
    EXPECT_EQ(code.plan.launches[0].grid[0].eval(&n_value), 10);
    EXPECT_EQ(code.plan.launches[1].grid[0], LaunchExpr::constant(1));
    EXPECT_EQ(code.plan.launches[1].block[0], LaunchExpr::constant(1));
    const std::string& src = code.source;
    EXPECT_TRUE(contains(src, "__trap();  // n must be positive")) << src;
    EXPECT_TRUE(contains(src, "const int half = ")) << src;
    EXPECT_TRUE(contains(src, "if ((n > 64))")) << src;
    if (internal::has_nvrtc()) internal::nvrtc_compile(src, "sm_90", {});
}

TEST(CudaHostDeviceSplit, SharedBufferOfSymbolicSize) {
    Var n("n");
    Buffer c("C", Float(32), {n});
    Var s("s", Handle());
    Stmt k = kernel(c, 4, Load::make(Float(32), s, 0));
    const For* outer = k.as<For>();
    Stmt inner = Allocate::make(s, Float(32), {n}, StorageScope::Shared, outer->body);
    Stmt body = For::make(outer->loop_var, 0, 4, ForKind::ThreadBound, inner, "blockIdx.x");
    LoweredFunc f{"f", {c}, body};
    EXPECT_THROW(internal::codegen_cuda(split_for_cuda(f), {n}, {}), CompileError);
}
