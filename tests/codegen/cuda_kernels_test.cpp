// CUDA codegen: the host/device split. Two root stages become two kernels with a global
// workspace between them; symbolic extents become shape-variable parameters and launch
// expressions.
#include "codegen/CudaTestUtil.h"
#include "tessel/ir/IROperator.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using namespace tessel::testing;

TEST(CudaKernels, TwoKernelsWithWorkspace) {
    Tensor A = placeholder({4096}, Float(32), "A");
    Tensor T = compute(
        {4096}, [&](Var i) { return A(i) * 3.0f; }, "T");
    Tensor C = compute(
        {4096}, [&](Var i) { return T(4095 - i) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    for (Tensor t : {T, C}) {
        int st = s.stage_of(t);
        s.split(st, 0, 256);
        s.bind(st, 0, IterAnnotation::BlockX);
        s.bind(st, 1, IterAnnotation::ThreadX);
    }
    CudaOutput out = expect_cuda_compiles(s, {A, C});
    const CudaLaunchPlan& plan = out.code.plan;
    ASSERT_EQ(plan.launches.size(), 2u);
    ASSERT_EQ(plan.workspaces.size(), 1u);
    EXPECT_EQ(plan.workspaces[0].name, "T");
    EXPECT_EQ(plan.workspaces[0].bytes, LaunchExpr::constant(4096 * 4));
    EXPECT_EQ(plan.launches[0].function, "main_kernel0");
    EXPECT_EQ(plan.launches[0].stage, "T");
    EXPECT_EQ(plan.launches[1].stage, "C");
    // Kernel 0: A (argument 0) and T (workspace 0: index 2); kernel 1: C and T.
    std::vector<CudaParam> p0 = {{CudaParam::Kind::Buffer, 0}, {CudaParam::Kind::Buffer, 2}};
    std::vector<CudaParam> p1 = {{CudaParam::Kind::Buffer, 1}, {CudaParam::Kind::Buffer, 2}};
    EXPECT_EQ(plan.launches[0].params, p0);
    EXPECT_EQ(plan.launches[1].params, p1);
    EXPECT_TRUE(contains(out.code.source, "main_kernel1(float* __restrict__ C, const float* "
                                          "__restrict__ T)"))
        << out.code.source;
}

TEST(CudaKernels, SymbolicExtent) {
    Var n("n");
    Tensor A = placeholder({n}, Float(32), "A");
    Tensor C = compute(
        {n}, [&](Var i) { return A(i) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.split(c, 0, 128);
    s.bind(c, 0, IterAnnotation::BlockX);
    s.bind(c, 1, IterAnnotation::ThreadX);
    CudaOutput out = expect_cuda_compiles(s, {A, C});
    ASSERT_EQ(out.shape_vars, std::vector<std::string>{"n"});
    ASSERT_EQ(out.code.plan.launches.size(), 1u);
    const CudaLaunch& l = out.code.plan.launches[0];
    int64_t n_value = 1000;
    EXPECT_EQ(l.grid[0].eval(&n_value), 8);  // ceil(1000 / 128)
    EXPECT_EQ(l.block[0], LaunchExpr::constant(128));
    ASSERT_EQ(l.params.size(), 3u);
    EXPECT_EQ(l.params[2], (CudaParam{CudaParam::Kind::ShapeVar, 0}));
    EXPECT_TRUE(contains(out.code.source, "long long tsl_shape_0")) << out.code.source;
}
