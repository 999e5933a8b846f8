// CUDA codegen: the host/device split of hand-written lowered IR: host lets, ifs and asserts move
// into the kernels in their scope, a loop-free store becomes a one-thread kernel, a shared buffer
// of non-constant size is a CompileError, and the kernels of sm_90 are dependent launches.
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

// With dependent launches (sm_90 and later) every kernel but the first waits for the one before
// it at entry, every kernel but the last lets the next one start; without, neither.
TEST(CudaHostDeviceSplit, DependentLaunchesWaitAndTrigger) {
    Var n("n");
    Buffer c("C", Float(32), {n});
    Stmt body = Seq::make({kernel(c, 2, 1.0f), kernel(c, 3, 2.0f), kernel(c, 4, 3.0f)});
    LoweredFunc f{"f", {c}, body};
    auto count = [](const std::string& src, const std::string& what) {
        size_t k = 0;
        for (size_t at = src.find(what); at != std::string::npos; at = src.find(what, at + 1)) ++k;
        return k;
    };
    internal::CudaCode plain = internal::codegen_cuda(split_for_cuda(f), {n}, {});
    ASSERT_EQ(plain.plan.launches.size(), 3u);
    for (const CudaLaunch& l : plain.plan.launches) EXPECT_FALSE(l.dependent);
    EXPECT_EQ(count(plain.source, "griddepcontrol"), 0u) << plain.source;

    internal::CudaCodegenOptions options;
    options.dependent_launch = true;
    internal::CudaCode code = internal::codegen_cuda(split_for_cuda(f), {n}, options);
    ASSERT_EQ(code.plan.launches.size(), 3u);
    EXPECT_FALSE(code.plan.launches[0].dependent);
    EXPECT_TRUE(code.plan.launches[1].dependent);
    EXPECT_TRUE(code.plan.launches[2].dependent);
    const std::string& src = code.source;
    EXPECT_EQ(count(src, "griddepcontrol.wait;"), 2u) << src;
    EXPECT_EQ(count(src, "griddepcontrol.launch_dependents;"), 2u) << src;
    // Kernel 0 triggers without waiting; kernel 2 waits without triggering; each first thing.
    size_t k0 = src.find(" f_kernel0("), k1 = src.find(" f_kernel1("), k2 = src.find(" f_kernel2(");
    ASSERT_TRUE(k0 != std::string::npos && k1 != std::string::npos && k2 != std::string::npos)
        << src;
    EXPECT_EQ(src.find("griddepcontrol.wait;"), src.find("griddepcontrol.wait;", k1)) << src;
    EXPECT_LT(src.find("griddepcontrol.launch_dependents;", k0), k1) << src;
    EXPECT_EQ(src.find("griddepcontrol.launch_dependents;", k2), std::string::npos) << src;
    if (internal::has_nvrtc()) internal::nvrtc_compile(src, "sm_90", {});

    // One kernel: nothing to wait for, nothing to let start.
    LoweredFunc one{"g", {c}, kernel(c, 2, 1.0f)};
    internal::CudaCode single = internal::codegen_cuda(split_for_cuda(one), {n}, options);
    ASSERT_EQ(single.plan.launches.size(), 1u);
    EXPECT_FALSE(single.plan.launches[0].dependent);
    EXPECT_EQ(count(single.source, "griddepcontrol"), 0u) << single.source;
}

namespace {

// for b in blockIdx.x(0, blocks): for t in threadIdx.x(0, threads): W[b * threads + t] = value
// (`sync`: a barrier after the store)
Stmt fill(const Var& w, Expr blocks, int threads, Expr value, bool sync = false) {
    Var b("b"), t("t");
    Stmt body = Store::make(w, value, b * threads + t);
    Stmt loop = For::make(t, 0, threads, ForKind::ThreadBound, body, "threadIdx.x");
    if (sync) loop = Seq::make({loop, Evaluate::make(Call::make(Intrinsic::thread_barrier, {}))});
    return For::make(b, 0, blocks, ForKind::ThreadBound, loop, "blockIdx.x");
}

size_t count_of(const std::string& src, const std::string& what) {
    size_t k = 0;
    for (size_t at = src.find(what); at != std::string::npos; at = src.find(what, at + 1)) ++k;
    return k;
}

}  // namespace

// Kernels that depend on each other in no way and write workspaces alone are one launch: two
// fills of workspaces (grids of n / 64 and n / 32 blocks of 64 and 32 threads) run in the blocks
// of one kernel, the second's after the first's; the sum that reads both is a kernel of its own.
TEST(CudaHostDeviceSplit, IndependentKernelsAreOneLaunch) {
    Var n("n");
    Buffer c("C", Float(32), {n});
    Var w1("W1", Handle()), w2("W2", Handle());
    Var b("b"), t("t");
    Stmt sum = For::make(b, 0, floordiv(n, 64), ForKind::ThreadBound,
                         For::make(t, 0, 64, ForKind::ThreadBound,
                                   Store::make(c->data,
                                               Load::make(Float(32), w1, b * 64 + t) +
                                                   Load::make(Float(32), w2, b * 64 + t),
                                               b * 64 + t),
                                   "threadIdx.x"),
                         "blockIdx.x");
    auto function = [&](bool sync) {
        Stmt body = Seq::make(
            {fill(w1, floordiv(n, 64), 64, 1.0f), fill(w2, floordiv(n, 32), 32, 2.0f, sync), sum});
        body = Allocate::make(w2, Float(32), {n}, StorageScope::Global, body);
        body = Allocate::make(w1, Float(32), {n}, StorageScope::Global, body);
        return LoweredFunc{"f", {c}, body};
    };
    internal::CudaCode code = internal::codegen_cuda(split_for_cuda(function(false)), {n}, {});
    ASSERT_EQ(code.plan.launches.size(), 2u);
    int64_t n_value = 640;
    EXPECT_EQ(code.plan.launches[0].grid[0].eval(&n_value), 10 + 20);
    EXPECT_EQ(code.plan.launches[0].block[0], LaunchExpr::constant(64));
    EXPECT_EQ(code.plan.launches[1].grid[0].eval(&n_value), 10);
    const std::string& src = code.source;
    // The second fill's threads past its 32 are guarded; its blocks come after the first's.
    EXPECT_TRUE(contains(src, "if ((int)threadIdx.x < 32)")) << src;
    EXPECT_EQ(count_of(src, "__global__"), 2u) << src;
    if (internal::has_nvrtc()) internal::nvrtc_compile(src, "sm_80", {});

    // A kernel that synchronises its block (here a barrier) keeps its own launch.
    internal::CudaCode synced = internal::codegen_cuda(split_for_cuda(function(true)), {n}, {});
    EXPECT_EQ(synced.plan.launches.size(), 3u);

    // TESSEL_CUDA_MERGE_KERNELS=0: every kernel a launch.
    setenv("TESSEL_CUDA_MERGE_KERNELS", "0", 1);
    internal::CudaCode apart = internal::codegen_cuda(split_for_cuda(function(false)), {n}, {});
    unsetenv("TESSEL_CUDA_MERGE_KERNELS");
    EXPECT_EQ(apart.plan.launches.size(), 3u);
}
