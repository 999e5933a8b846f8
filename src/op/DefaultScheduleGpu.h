// The default schedules for "cuda" targets (op/DefaultSchedule.h, docs/operators.md "GPU
// default schedules"): row groups (softmax, norms) a warp or a block per row, row reductions
// across threads, matmul-like and conv stages in shared-memory tiles with register tiles.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tessel/Target.h"
#include "tessel/schedule/Schedule.h"

namespace tessel::op::internal {

/// The rule-based default schedule of `outputs` for a GPU target.
Schedule default_schedule_gpu(const std::vector<Tensor>& outputs, const Target& target);

/// Split-K: the length of the parts a batch of `batch` m x n products' reduction of length k is
/// split into by the default schedule on `target` (0: not split): where their 64 x 64 tiles
/// leave SMs idle, whole k steps of 16 at least 64 long (the last part may end short of the
/// others: its sum is bounded by k), chosen by a model of time: the register tiles' model
/// (gpu_matmul_tile) of the parts as a batch of products, times the part's length, plus a
/// block's fixed costs, against the partial sums' round trip through memory and the summing
/// kernel's launch.
int64_t split_k_length(int64_t batch, int64_t m, int64_t n, int64_t k, const Target& target);

/// Makes split_k_length return `length` (0: no split; a length of k or more is no split either)
/// on the calling thread, for any product, until called with nullopt (the model's choice again);
/// returns the length forced before. For the sweep that fitted the model
/// (benchmarks/experiments/matmul_split_k_cuda.py), not for users.
std::optional<int64_t> force_split_k_length(std::optional<int64_t> length);

/// A float32 matmul-like stage's register tile under the default: a block's rows and columns,
/// each over threads as vthreads strided parts (rows / row_threads / row_vthreads points a
/// thread per part), and the columns of k a shared-memory step.
struct GpuMatmulTile {
    int64_t rows = 0, row_threads = 1, row_vthreads = 1;
    int64_t cols = 0, col_threads = 1, col_vthreads = 1;
    int64_t bk = 16;
};

/// The tile the default gives a batch of `batch` m x n products on `target`: of the three of
/// docs/operators.md ("GPU default schedules"), the fastest by a model of the busiest SM's blocks.
GpuMatmulTile gpu_matmul_tile(int64_t batch, int64_t m, int64_t n, const Target& target);

/// Makes the default give every matmul-like stage `tile`, on the calling thread, until called
/// with nullopt (the model's choice again); returns the tile forced before. For the tile sweep
/// that fitted the model (benchmarks/experiments/matmul_tiles_cuda.py), not for users.
std::optional<GpuMatmulTile> force_gpu_matmul_tile(std::optional<GpuMatmulTile> tile);

/// How a conv2d with groups of 1 becomes a matrix product (an implicit GEMM): Schedule::reindex's
/// `order` and `groups` (NCHW: output channels x pixels of all images; NHWC: pixels x output
/// channels; both over input channels x window), and the conv's loops (or its element-wise
/// consumer's) grouped alike: `consumer_order`, then runs of `consumer_groups` loops fused.
struct ImplicitGemmLayout {
    std::vector<int> order, groups, consumer_order, consumer_groups;
};

/// The layout of `op` when it is a conv2d the implicit GEMM serves (four output axes, three
/// reduction axes, a read of the input and one of the weight, no branch, constant shape, the
/// channel axis 1 or 3), else nullopt. Whether it has groups of 1 shows after reindex: both
/// gathers two-dimensional. The GPU default and the tuner's implicit_gemm sketch rule use it.
std::optional<ImplicitGemmLayout> implicit_gemm_layout(const Operation& op);

/// The number of window positions of conv2d `op` (R x S): the product of the extents of its
/// reduction axes that share an index with an output pixel axis (iy = oy * stride + ry); 1 for a
/// 1 x 1 conv. Whatever the order of the reduction axes (NCHW's rc, ry, rx; NHWC's ry, rx, rc).
int64_t conv_window(const Operation& op);

/// Groups the loops of `stage` (a conv, or its element-wise consumer, with untouched loops) as
/// the product's axes: reordered by `l.consumer_order`, each run of `l.consumer_groups` fused.
void group_loops(Schedule& s, int stage, const ImplicitGemmLayout& l);

/// The two conv2d kernels of the GPU default (docs/operators.md): an implicit GEMM on the matmul
/// tiles, or the direct convolution of op/GpuConvTiles.h.
enum class GpuConvKernel { ImplicitGemm, Direct };

/// Makes the default give every conv2d `kernel` (where it applies), on the calling thread, until
/// called with nullopt (the default's own choice again); returns the kernel forced before. For
/// the experiment that compares them (benchmarks/experiments/conv_kernels_cuda.py), not for users.
std::optional<GpuConvKernel> force_gpu_conv_kernel(std::optional<GpuConvKernel> kernel);

}  // namespace tessel::op::internal
