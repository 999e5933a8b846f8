// GPU corpus programs: float4 vectorization and unrolling inside kernels, float16 and bfloat16,
// two kernels with a global intermediate, symbolic extents (see GpuScheduleCorpus.h); and the
// corpus's scheduling helpers.
#include "correctness/ScheduleTestUtil.h"  // Matmul
#include "gpu/GpuCorpusParts.h"
#include "tessel/ir/IROperator.h"
#include "tessel/te/Operation.h"

namespace tessel::testing::corpus {

namespace {

// C = A * B + 1 in `t`, 1000 elements (a partial last block) in blocks of 128 threads.
GpuProgram elementwise_16bit(const char* name, Type t) {
    Tensor A = placeholder({1000}, t, "A");
    Tensor B = placeholder({1000}, t, "B");
    Tensor C = compute(
        {1000}, [&](Var i) { return A(i) * B(i) + cast(t, 1.0f); }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.split(c, 0, 128);
    bind_leaves(s, c, {kBx, kTx});
    return gpu_program(name, s, 1, 2.0);
}

}  // namespace

void bind_leaves(Schedule& s, int stage, const std::vector<IterAnnotation>& axes) {
    for (size_t leaf = 0; leaf < axes.size(); ++leaf)
        s.bind(stage, static_cast<int>(leaf), axes[leaf]);
}

void cooperative_fetch(Schedule& s, int stage, int ty, int tx) {
    std::vector<int> all(s.stage(stage).leaf.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    if (all.size() > 1) s.fuse(stage, all);
    s.split(stage, 0, int64_t(ty) * tx);  // rest, ty*tx
    s.split(stage, 1, tx);                // rest, ty, tx
    s.bind(stage, 1, kTy);
    s.bind(stage, 2, kTx);
}

GpuProgram vectorize_float4() {  // cuda_elementwise_test.cpp's schedule, smaller
    Tensor A = placeholder({24, 256}, Float(32), "A");
    Tensor B = placeholder({24, 256}, Float(32), "B");
    Tensor C = compute(
        {24, 256}, [&](Var i, Var j) { return A(i, j) * 2.0f + B(i, j); }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.split(c, 1, 4);   // i jo ji
    s.split(c, 1, 32);  // i joo joi ji
    bind_leaves(s, c, {kBy, kBx, kTx});
    s.vectorize(c, 3);
    return gpu_program("vectorize_float4", s, 1, 3.0);
}

GpuProgram unroll_in_kernel() {  // the reduction loop unrolled inside each thread
    Matmul mm(32, 24, 8);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.tile(c, 0, 1, 8, 8);  // io jo ii ji k
    bind_leaves(s, c, {kBy, kBx, kTy, kTx});
    s.unroll(c, 4);
    return gpu_program("unroll_in_kernel", s, 8);
}

GpuProgram float16_elementwise() {
    return elementwise_16bit("float16_elementwise", Float(16));
}

GpuProgram bfloat16_elementwise() {
    return elementwise_16bit("bfloat16_elementwise", BFloat(16));
}

GpuProgram two_kernels_global_intermediate() {  // cuda_kernels_test.cpp: a global workspace T
    const int n = 1000;
    Tensor A = placeholder({n}, Float(32), "A");
    Tensor T = compute(
        {n}, [&](Var i) { return A(i) * 3.0f; }, "T");
    Tensor C = compute(
        {n}, [&](Var i) { return T(n - 1 - i) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    for (auto [t, threads] : {std::pair{T, 256}, std::pair{C, 64}}) {  // two launch shapes
        int st = s.stage_of(t);
        s.split(st, 0, threads);
        bind_leaves(s, st, {kBx, kTx});
    }
    return gpu_program("two_kernels_global_intermediate", s, 1, 3.0);
}

GpuProgram symbolic_extent() {  // n is a kernel parameter taken from the arrays' shapes
    Var n("n");
    Tensor A = placeholder({n}, Float(32), "A");
    Tensor C = compute(
        {n}, [&](Var i) { return A(i) * A(i) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.split(c, 0, 128);
    bind_leaves(s, c, {kBx, kTx});
    GpuProgram p = gpu_program("symbolic_extent", s);
    p.shapes = {{1000}, {1000}};
    return p;
}

}  // namespace tessel::testing::corpus
