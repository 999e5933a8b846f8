// The GPU corpus's factories (GpuScheduleCorpus.cpp lists them) and the scheduling helpers they
// share. Private to tests/gpu.
#pragma once

#include <vector>

#include "gpu/GpuCheck.h"

namespace tessel::testing::corpus {

inline constexpr IterAnnotation kBx = IterAnnotation::BlockX, kBy = IterAnnotation::BlockY,
                                kBz = IterAnnotation::BlockZ, kTx = IterAnnotation::ThreadX,
                                kTy = IterAnnotation::ThreadY, kTz = IterAnnotation::ThreadZ;

/// Binds the stage's leaves 0, 1, ... to `axes`, in order.
void bind_leaves(Schedule& s, int stage, const std::vector<IterAnnotation>& axes);

/// A copy stage computed inside a kernel of ty x tx threads, fetched cooperatively: its loops
/// fused, split into (rest, ty, tx) and the last two bound to threadIdx.y and threadIdx.x.
void cooperative_fetch(Schedule& s, int stage, int ty, int tx);

// GpuCorpusThreads.cpp: thread bindings, virtual threads, shared and local memory.
GpuProgram bind_blocks_threads();
GpuProgram bind_matmul_grid();
GpuProgram bind_xyz();
GpuProgram local_producer();
GpuProgram shared_producer();
GpuProgram vthread_strided();
GpuProgram vthread_shared();
GpuProgram shared_gemm();
GpuProgram shared_gemm_partial_tiles();
GpuProgram cache_read_shared_gemm();
GpuProgram cache_read_local();
GpuProgram cache_write_local();

// GpuCorpusReductions.cpp: cross-thread reductions, rfactor, softmax.
GpuProgram cross_thread_sum();
GpuProgram cross_thread_sum_partial();
GpuProgram cross_thread_max();
GpuProgram cross_thread_min();
GpuProgram cross_thread_two_axes();
GpuProgram cross_thread_argmax();
GpuProgram cross_thread_result_in_shared();
GpuProgram rfactor_cross_thread();
GpuProgram softmax_block_per_row();

// GpuCorpusKernels.cpp: vectorize, unroll, 16-bit floats, two kernels, symbolic extents.
GpuProgram vectorize_float4();
GpuProgram unroll_in_kernel();
GpuProgram float16_elementwise();
GpuProgram bfloat16_elementwise();
GpuProgram two_kernels_global_intermediate();
GpuProgram symbolic_extent();

}  // namespace tessel::testing::corpus
