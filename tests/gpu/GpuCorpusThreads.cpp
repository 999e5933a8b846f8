// GPU corpus programs: thread bindings, virtual threads, shared and local memory (see
// GpuScheduleCorpus.h). Not included: the correctness tests' schedules whose kernel runs inside a
// serial host loop (schedule_bind_test.cpp's ThreadsOnlyKernelInsideSerialLoop and
// KernelLaunchedPerIterationOfASerialLoop): the CUDA backend refuses loops outside every kernel
// (tests/error/cuda_loop_outside_kernel.cpp).
#include "gpu/GpuCorpusParts.h"

#include "correctness/ScheduleTestUtil.h"  // Matmul
#include "correctness/SharedGemm.h"
#include "tessel/ir/IROperator.h"
#include "tessel/te/Operation.h"

namespace tessel::testing {

namespace corpus {

// --- bind ---

GpuProgram bind_blocks_threads() {  // schedule_bind_test.cpp: ElementwiseBlocksAndThreads
    Tensor A = placeholder({37, 20}, Float(32), "A");
    Tensor B = compute(
        {37, 20}, [&](Var i, Var j) { return A(i, j) * 2.0f + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    int b = s.stage_of(B);
    s.split(b, 0, 8);  // 37 = 4*8 + 5: the last block is guarded
    s.bind(b, 0, kBx);
    s.bind(b, 1, kTy);
    s.bind(b, 2, kTx);
    return gpu_program("bind_blocks_threads", s);
}

GpuProgram bind_matmul_grid() {  // schedule_bind_test.cpp: MatmulTwoDimensionalGrid
    Matmul mm(24, 20, 9);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.tile(c, 0, 1, 8, 4);  // io jo ii ji k
    s.bind(c, 0, kBy);
    s.bind(c, 1, kBx);
    s.bind(c, 2, kTy);
    s.bind(c, 3, kTx);
    return gpu_program("bind_matmul_grid", s, 9);
}

GpuProgram bind_xyz() {  // every block and thread axis, partial tiles on the innermost
    Tensor A = placeholder({6, 8, 40}, Float(32), "A");
    Tensor B = compute(
        {6, 8, 40}, [&](Var i, Var j, Var k) { return A(i, j, k) * 2.0f - 1.0f; }, "B");
    Schedule s = create_schedule({B});
    int b = s.stage_of(B);
    s.split(b, 0, 2);                  // io ii j k
    s.split(b, 2, 4);                  // io ii jo ji k
    s.split(b, 4, 16);                 // io ii jo ji ko ki (40 = 2*16 + 8)
    s.reorder(b, {0, 2, 4, 1, 3, 5});  // io jo ko ii ji ki
    bind_leaves(s, b, {kBz, kBy, kBx, kTz, kTy, kTx});
    return gpu_program("bind_xyz", s);
}

GpuProgram local_producer() {  // schedule_bind_test.cpp: LocalProducerPerThread
    Tensor A = placeholder({16, 12}, Float(32), "A");
    Tensor P = compute(
        {16, 12}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "P");
    Tensor C = compute(
        {16, 12}, [&](Var i, Var j) { return P(i, j) * P(i, j); }, "C");
    Schedule s = create_schedule({C});
    int p = s.stage_of(P), c = s.stage_of(C);
    s.bind(c, 0, kBx);
    s.split(c, 1, 4);
    s.bind(c, 1, kTx);
    s.compute_at(p, c, 1);
    s.set_scope(p, StorageScope::Local);
    return gpu_program("local_producer", s, 1, 4.0);
}

GpuProgram shared_producer() {  // set_scope(shared) + compute_at at the block loop
    Tensor A = placeholder({16, 64}, Float(32), "A");
    Tensor P = compute(
        {16, 64}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "P");
    Tensor C = compute(
        {16, 64}, [&](Var i, Var j) { return P(i, 63 - j) * 2.0f; }, "C");
    Schedule s = create_schedule({C});
    int p = s.stage_of(P), c = s.stage_of(C);
    s.bind(c, 0, kBx);
    s.split(c, 1, 32);  // i jo ji
    s.bind(c, 2, kTx);
    s.compute_at(p, c, 0);
    s.set_scope(p, StorageScope::Shared);
    s.split(p, 1, 32);
    s.bind(p, 2, kTx);
    return gpu_program("shared_producer", s, 1, 4.0);
}

// --- vthread ---

GpuProgram vthread_strided() {  // schedule_vthread_test.cpp: StridedThreadsInATile
    Matmul mm(32, 16, 6);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.split(c, 0, 16);
    s.split(c, 1, 8);  // io ii.o ii.i j k
    s.bind(c, 0, kBx);
    s.bind(c, 1, IterAnnotation::VThread);
    s.bind(c, 2, kTx);
    return gpu_program("vthread_strided", s, 6);
}

GpuProgram vthread_shared() {  // schedule_vthread_test.cpp: SharedStageAcrossVirtualThreads
    Tensor A = placeholder({8, 32}, Float(32), "A");
    Tensor As = compute(
        {8, 32}, [&](Var i, Var j) { return A(i, j); }, "As");
    Tensor B = compute(
        {8, 32}, [&](Var i, Var j) { return As(i, 31 - j) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    int as = s.stage_of(As), b = s.stage_of(B);
    s.bind(b, 0, kBx);
    s.split(b, 1, 16);
    s.bind(b, 1, IterAnnotation::VThread);
    s.bind(b, 2, kTx);
    s.compute_at(as, b, 0);
    s.set_scope(as, StorageScope::Shared);
    s.split(as, 1, 16);
    s.bind(as, 2, kTx);
    return gpu_program("vthread_shared", s);
}

// --- memory: shared GEMMs, caches ---

GpuProgram shared_gemm() {  // spmd_shared_gemm_test.cpp
    SharedGemm g(32, 24, 24, 8);
    return gpu_program("shared_gemm", g.s, 24);
}

GpuProgram shared_gemm_partial_tiles() {  // spmd_shared_gemm_test.cpp: NonDividingTiles
    SharedGemm g(20, 12, 12, 8);
    return gpu_program("shared_gemm_partial_tiles", g.s, 12);
}

GpuProgram cache_read_shared_gemm() {  // schedule_cache_read_test.cpp's tile, bound to threads
    Matmul mm(33, 40, 20);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    int as = s.cache_read(s.stage_of(mm.A), "shared", {c});
    int bs = s.cache_read(s.stage_of(mm.B), "shared", {c + 1});
    c = s.stage_of(mm.C);
    s.tile(c, 0, 1, 8, 16);            // io jo ii ji k
    s.split(c, 4, 5);                  // io jo ii ji ko ki
    s.reorder(c, {0, 1, 4, 2, 3, 5});  // io jo ko ii ji ki
    s.bind(c, 0, kBy);
    s.bind(c, 1, kBx);
    s.bind(c, 3, kTy);
    s.bind(c, 4, kTx);
    s.compute_at(as, c, 2);
    s.compute_at(bs, c, 2);
    for (int st : {as, bs}) cooperative_fetch(s, st, 8, 16);
    return gpu_program("cache_read_shared_gemm", s, 20);
}

GpuProgram cache_read_local() {  // each thread copies its row of A into registers
    Matmul mm(16, 32, 12);
    Schedule s = create_schedule({mm.C});
    int al = s.cache_read(s.stage_of(mm.A), "local", {s.stage_of(mm.C)});
    int c = s.stage_of(mm.C);
    s.split(c, 1, 16);  // i jo ji k
    s.bind(c, 0, kBx);
    s.bind(c, 1, kTy);
    s.bind(c, 2, kTx);
    s.compute_at(al, c, 2);
    return gpu_program("cache_read_local", s, 12);
}

GpuProgram cache_write_local() {  // accumulate in registers, then one store per thread
    Matmul mm(32, 24, 16);
    Schedule s = create_schedule({mm.C});
    int cl = s.cache_write(s.stage_of(mm.C), "local");
    int c = s.stage_of(mm.C);
    s.tile(c, 0, 1, 8, 8);  // io jo ii ji
    bind_leaves(s, c, {kBy, kBx, kTy, kTx});
    s.compute_at(cl, c, 3);
    return gpu_program("cache_write_local", s, 16);
}

}  // namespace corpus

}  // namespace tessel::testing
