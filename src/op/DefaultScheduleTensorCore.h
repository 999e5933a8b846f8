// The tensor-core default schedule of 16-bit matrix products on GPUs (op/DefaultScheduleGpu.h
// calls it; docs/operators.md, "Tensor cores"): tutorials/07_tensor_core_gemm.py's kernel with
// its tiles chosen for the shape and the GPU, zero-padded shared tiles for any m and n; on
// sm_90a, for the large products it serves, tutorials/08_hopper_gemm.py's wgmma kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessel/Target.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/DAGAnalysis.h"

namespace tessel::op::internal {

/// The tiles of a tensor-core product: a block computes bm x bn of the output in warps of
/// wm x wn, its operands' shared tiles bk deep in k, `stages` of them in flight (cp.async).
struct TensorCoreTiles {
    int64_t bm = 0, bn = 0, bk = 0, wm = 0, wn = 0, stages = 0;
    /// The output tile goes through shared memory (fp32) to the consumer, whose copy out guards
    /// the rows and columns past the output (any m and n) and applies the epilogue.
    bool shared_epilogue = false;
    int64_t elem_bytes = 2;  ///< the operands' element size: 2 (16-bit), 4 (float32 as tf32)
    int64_t warps() const { return (bm / wm) * (bn / wn); }
    /// The epilogue tile's rows are bn + 8 floats apart (storage_align: 32 bytes past a multiple
    /// of 128): a warp's fragment store, 2 floats a lane on 8 rows, then takes 2 shared-memory
    /// wavefronts instead of 8 (rows a multiple of 128 bytes apart share their banks). H200,
    /// float16 conv2d at batch 8 (ResNet-50's layers, geomean x cuDNN): 0.776 -> 0.869.
    static constexpr int64_t kEpilogueRowPad = 8;
    /// Bytes of the epilogue's float32 tile (0 without one).
    int64_t epilogue_bytes() const { return shared_epilogue ? bm * (bn + kEpilogueRowPad) * 4 : 0; }
    /// Bytes of shared memory a block uses: the pipelined operand tiles and the epilogue's tile.
    int64_t shared_bytes() const {
        return (bm * bk + bk * bn) * elem_bytes * stages + epilogue_bytes();
    }
};

/// The tiles for an m x n x k product (`batch` of them) on `target`; nothing when k is not a
/// multiple of 16 (the reduction's tiles must be whole) or the product is smaller than a
/// fragment. `direct_store` says whether the consumer can store the fragments itself (no
/// epilogue beyond a conversion): then tiles that divide m and n skip the shared epilogue.
/// `elem_bytes` 4 (tf32) halves the candidates' k tiles (their shared tiles would not fit).
/// `lean` skips tiles at least twice m or n where a smaller one follows (an implicit GEMM of 64
/// output channels: a 256-column tile would compute three quarters padding).
std::optional<TensorCoreTiles> choose_tensor_core_tiles(int64_t batch, int64_t m, int64_t n,
                                                        int64_t k, bool direct_store,
                                                        const Target& target,
                                                        int64_t elem_bytes = 2, bool lean = false);

/// A tensor-core product found in the DAG, its caches inserted (before inlining), its loops
/// scheduled by schedule_tensor_core (after).
struct TensorCorePlan {
    TensorCoreTiles tiles;
    const char* mma = nullptr;
    bool b_nk = false;  ///< B is read [n][k] (mma ..._bt, ldmatrix_bt_x4)
    /// float32 operands rounded to tf32 (mma_m16n8k8_tf32: k steps of 8, plain fragment loads).
    bool tf32 = false;
    Operation a_shared, a_frag, b_shared, b_frag, acc, store;
    /// Whether A's (B's) tiles copy from a global copy whose rows are padded to 16 bytes (rows
    /// of an odd length, which cp.async cannot copy from where they lie).
    bool a_padded = false, b_padded = false;
    /// B (read [n][k]) is an HWIO weight's gather, whose addresses run along n: its shared tile
    /// stored k-major (storage_reorder), copied along n, its fragments loaded by
    /// ldmatrix_bt_trans_x4; for wgmma stored in n-major column panels of 64 ([n / 64][k][64]),
    /// as a [k][n] B's.
    bool b_kmajor = false;
    /// The copy out of the shared tile (shared_epilogue; mma.sync's, or wgmma's for an implicit
    /// GEMM), else undefined.
    Operation epilogue;
    /// An implicit GEMM's epilogue (a conv, or its consumer): its loops reordered and fused into
    /// the product's two axes first (group_loops).
    std::vector<int> consumer_order, consumer_groups;
    /// Whether the epilogue's columns are consecutive in its output (stored 2 or 4 at a time);
    /// not an NCHW conv's output channels.
    bool epilogue_vector = true;
    /// Split-K: the product, which sums the partial sums that the tensor cores compute (a batch
    /// of parts, rfactor), and its element-wise consumer (undefined for none); both are left to
    /// the CUDA-core rules (one thread an output).
    Operation split_sum, sum_consumer;
    /// Split-K on wgmma: the sum (and its consumer) computed in the wgmma kernel after each tile
    /// of partial sums by the last block to finish the tile's parts (reverse_compute_at), not in
    /// a kernel of its own (TESSEL_CUDA_SPLIT_K_KERNELS=2 asks for the second kernel).
    bool sum_in_kernel = false;
    /// Hopper's warp-group tensor cores (sm_90a): the wgmma intrinsic (tutorial 08's kernel:
    /// warp groups of 64 rows, B's shared tile in column panels, no fragment stages); empty for
    /// the mma.sync kernel.
    std::string wgmma;
    /// wgmma's tiles fetched by TMA on mbarriers (both operands are kernel arguments), in a
    /// persistent kernel of `blocks` blocks (about one an SM, each computing its tiles in turn).
    bool tma = false;
    int64_t blocks = 0;
};

/// The wgmma tiles for a product on an sm_90a target, where tutorial 08's kernel serves it: a
/// 2-D or batched product (B read [k][n], or [n][k] as dense's weight; a batch's tiles count
/// together, the batch a leading tile loop) whose output the fragments store,
/// in blocks of 128 rows (64, one warp group, for m <= 64) and 256, 128 or 64 columns, as many
/// k tiles of 64 in flight as shared memory holds (at most 8). Of the widths, the one that keeps
/// the SMs computing the output the most (rounds of a persistent kernel, padding past m and n,
/// the width's own speed), if enough (else mma.sync's smaller tiles serve it). The tiles divide m
/// and n and k is a multiple of 64, or the operands are fetched by TMA (`tma_rows`: both are kernel
/// arguments whose rows are a multiple of 16 bytes): it reads zeros past their edges, and the
/// fragment stores stop at the output's. `epilogue`: the output goes through a float32 tile in
/// shared memory that the consumer copies out with guards (shared_epilogue; an implicit GEMM's
/// conv, whatever the consumer computes): tiles of any m and n, copied by cp.async, leaving room
/// for at least 3 k tiles in flight beside it.
std::optional<TensorCoreTiles> choose_wgmma_tiles(int64_t batch, int64_t m, int64_t n, int64_t k,
                                                  bool direct_store, bool tma_rows,
                                                  const Target& target, bool epilogue = false);

/// Split-K for the wgmma kernel, where its tiles leave more than half the SMs idle and m <= 128
/// (a few rows and a long k: 64 x 4096 x 4096): the tiles (as choose_wgmma_tiles, TMA's rows
/// needed, one block row: one warp group for 64 rows, two for 128) and the length of the
/// parts, a multiple of 64, so that the tiles of all the parts fill about one round of the SMs,
/// and at least 1024 long where that keeps the SMs busy enough (else 512, else 256: a short part
/// spends its time filling the pipeline). Nothing where no split serves
/// (k too short, enough tiles, more rows). Whatever the consumer computes: the parts' partial
/// sums store their fragments as they are, and the kernel summing them applies it (dense's bias
/// and activation).
struct WgmmaSplit {
    TensorCoreTiles tiles;
    int64_t length = 0;
};
std::optional<WgmmaSplit> choose_wgmma_split(int64_t batch, int64_t m, int64_t n, int64_t k,
                                             bool tma_rows, const Target& target);

/// The wgmma kernel for one row of tiles (m <= 128), unsplit, where neither choose_wgmma_tiles
/// nor a split serves it: the product streams B once, and TMA's copies stream it faster than
/// mma.sync's cp.async tiles even on half the SMs. Its width is the one of choose_wgmma_tiles'
/// (256, 128 or 64 columns) whose tiles keep the most SMs busy, if enough; rows past m and the
/// width's own speed are not weighed (the product waits for memory, not for the tensor cores).
/// TMA's rows needed (`tma_rows`), one product (no batch), an output the fragments store.
std::optional<TensorCoreTiles> choose_wgmma_row(int64_t batch, int64_t m, int64_t n, int64_t k,
                                                bool direct_store, bool tma_rows,
                                                const Target& target);

/// The blocks of a persistent kernel over `tiles` tiles: about one an SM, the tiles spread evenly
/// (each block computes ceil(tiles / blocks) tiles, the last round's past `tiles` computed on
/// zeros and not stored).
int64_t persistent_blocks(int64_t tiles, const Target& target);

/// When op `i` of `a` is a 2-D or batched product C = sum_k A[.., i, k] * B[.., k, j] (or B[.., j,
/// k]) of two float16 or bfloat16 placeholders accumulated in float32, or of two float32 ones
/// rounded to tf32 (round_tf32(A[.., i, k]) * round_tf32(B[.., k, j]): op::matmul's allow_tf32),
/// or a float16 or bfloat16 conv2d (groups of 1, NCHW or NHWC) as an implicit GEMM (reindexed),
/// on a cuda target of sm_80 or newer: its caches inserted into `s` (`q` is its
/// element-wise consumer, -1 for none) and the plan.
std::optional<TensorCorePlan> plan_tensor_core(Schedule& s, const DAGAnalysis& a, int i, int q,
                                               const Target& target);

/// The loops of a planned tensor-core product (after the injective stages are inlined).
void schedule_tensor_core(Schedule& s, const TensorCorePlan& p);

}  // namespace tessel::op::internal
