// split_host_device in lower(): a GPU target's pipeline ends with the host/device split (kernels
// marked in the printed IR, workspaces around them), the split function computes what the
// unsplit one does in the loop interpreter, and a CPU target's pipeline has no split.
#include <gtest/gtest.h>

#include "tessel/HostArray.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"
#include "tessel/lower/SplitHostDevice.h"
#include "tessel/te/Operation.h"

namespace tessel {
namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

struct TwoStages {
    Tensor A, B, C;
    Schedule s;
};

// B = A * 2 (a global intermediate: a workspace), C = B + 1; both bound to blocks of 64 threads.
TwoStages two_gpu_stages() {
    Tensor A = placeholder({256}, Float(32), "A");
    Tensor B = compute(
        {256}, [&](Var i) { return A(i) * 2.0f; }, "B");
    Tensor C = compute(
        {256}, [&](Var i) { return B(i) + 1.0f; }, "C");
    TwoStages t{A, B, C, create_schedule({C})};
    for (const Tensor& x : {t.B, t.C}) {
        int st = t.s.stage_of(x);
        t.s.split(st, 0, 64);
        t.s.bind(st, 0, IterAnnotation::BlockX);
        t.s.bind(st, 1, IterAnnotation::ThreadX);
    }
    return t;
}

TEST(SplitHostDevice, LowerForCudaEndsWithTheSplit) {
    TwoStages t = two_gpu_stages();
    LoweredFunc f = lower(t.s, {t.A, t.C}, Target("cuda -arch=sm_80"), "main", LowerOptions{});
    std::string ir = to_string(f);
    EXPECT_TRUE(is_host_device_split(f));
    EXPECT_TRUE(contains(ir, "attr device_kernel = 0")) << ir;
    EXPECT_TRUE(contains(ir, "attr device_kernel = 1")) << ir;
    // The workspace B is allocated around both kernels: the body starts with it.
    ASSERT_NE(f.body.as<Allocate>(), nullptr) << ir;
    EXPECT_EQ(f.body.as<Allocate>()->buffer_var.name(), "B");

    // Without a target nothing is split; for a CPU target the bindings are refused up front
    // (verify_schedule), before any pass runs.
    LoweredFunc plain = lower(t.s, {t.A, t.C}, "main", LowerOptions{});
    EXPECT_FALSE(is_host_device_split(plain));
    EXPECT_FALSE(contains(to_string(plain), "device_kernel"));
    EXPECT_THROW(lower(t.s, {t.A, t.C}, Target("llvm"), "main", LowerOptions{}), CompileError);
}

TEST(SplitHostDevice, TheSplitFunctionComputesTheSame) {
    TwoStages t = two_gpu_stages();
    LoweredFunc split = lower(t.s, {t.A, t.C}, Target("cuda -arch=sm_80"), "main", LowerOptions{});
    LoweredFunc plain = lower(t.s, {t.A, t.C}, "main", LowerOptions{});
    HostArray a = HostArray::random(Float(32), {256}, 7);
    HostArray c1(Float(32), {256}), c2(Float(32), {256});
    run_lowered(split, {&a, &c1});
    run_lowered(plain, {&a, &c2});
    for (int64_t i = 0; i < 256; ++i) {
        EXPECT_EQ(c1.get(i), c2.get(i)) << i;
        EXPECT_FLOAT_EQ(c1.get(i), a.get(i) * 2.0 + 1.0) << i;
    }
}

TEST(SplitHostDevice, IsIdempotent) {
    TwoStages t = two_gpu_stages();
    Target gpu("cuda -arch=sm_80");
    LoweredFunc f = lower(t.s, {t.A, t.C}, gpu, "main", LowerOptions{});
    EXPECT_EQ(to_string(split_host_device(f, gpu)), to_string(f));
}

// B1 = A * 2 and B2 = A * 3 (workspaces, blocks of 64 and 32 threads) depend on each other in no
// way: one kernel computes both, B2 in the blocks after B1's; C = B1 + B2 reads them, a kernel
// of its own. The split function computes what the unsplit one does.
TEST(SplitHostDevice, IndependentKernelsMerged) {
    Tensor A = placeholder({256}, Float(32), "A");
    Tensor B1 = compute(
        {256}, [&](Var i) { return A(i) * 2.0f; }, "B1");
    Tensor B2 = compute(
        {256}, [&](Var i) { return A(i) * 3.0f; }, "B2");
    Tensor C = compute(
        {256}, [&](Var i) { return B1(i) + B2(i); }, "C");
    Schedule s = create_schedule({C});
    for (auto [x, threads] : {std::pair{B1, 64}, std::pair{B2, 32}, std::pair{C, 64}}) {
        int st = s.stage_of(x);
        s.split(st, 0, threads);
        s.bind(st, 0, IterAnnotation::BlockX);
        s.bind(st, 1, IterAnnotation::ThreadX);
    }
    LoweredFunc split = lower(s, {A, C}, Target("cuda -arch=sm_80"), "main", LowerOptions{});
    std::string ir = to_string(split);
    EXPECT_TRUE(contains(ir, "attr device_kernel = 1")) << ir;
    EXPECT_FALSE(contains(ir, "attr device_kernel = 2")) << ir;
    LoweredFunc plain = lower(s, {A, C}, "main", LowerOptions{});
    HostArray a = HostArray::random(Float(32), {256}, 11);
    HostArray c1(Float(32), {256}), c2(Float(32), {256});
    run_lowered(split, {&a, &c1});
    run_lowered(plain, {&a, &c2});
    for (int64_t i = 0; i < 256; ++i) {
        EXPECT_EQ(c1.get(i), c2.get(i)) << i;
        EXPECT_FLOAT_EQ(c1.get(i), a.get(i) * 2.0f + a.get(i) * 3.0f) << i;
    }
}

}  // namespace
}  // namespace tessel
