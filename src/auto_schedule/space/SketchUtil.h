// Helpers shared by sketch generation, its rules and annotation (not public).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/auto_schedule/space/Sketch.h"

namespace tessel::internal {

/// Inserts an entry for a stage the schedule inserted at `index` (cache_read, cache_write,
/// rfactor), shifting the tile groups' stages.
void insert_sketch_stage(Sketch& sketch, int index);

/// ScheduleError unless `structure` is a string of S and R with at least one of each.
void check_tiling_structure(const std::string& structure);

/// Splits leaf `pos` of `stage` into `levels` loops with open lengths (levels - 1 splits, the
/// innermost first); returns the tile group (its steps outer level first: steps[0] makes level 1).
TileGroup split_levels(Sketch& sketch, int stage, int pos, int levels, int64_t max_innermost);

/// The product of the constant extents of the stage's root axes of `kind` (symbolic: -1).
int64_t root_extent_product(const Stage& st, IterKind kind);

/// Whether the stage has reduction axes.
bool has_reduction_axes(const Stage& st);

/// Whether read `r` has two indices, exactly the variables `row` and `col` (a GEMM operand
/// read as A[i, k] or B[k, j]).
bool reads_at(const TensorRead* r, const Var& row, const Var& col);

/// Fuses the stage's reduction leaf loops (after its data-parallel ones) into one; returns the
/// number of data-parallel leaf loops before it.
int fuse_reduction_loops(Schedule& s, int stage);

/// The stages that read stage `stage`'s output directly (its op is among their inputs).
std::vector<int> direct_readers(const Schedule& s, int stage);

/// The stage of the element-wise consumer of stage `st` (seen through inlined stages, as
/// DAGAnalysis::elementwise_consumer sees it: a bias, an activation) when it is Plain and
/// untouched (its root loop nest, no reduction) and has the extents of `st`'s data-parallel
/// axes: the stage a sketch tiles as the output of `st`'s tile (its epilogue); -1 otherwise.
int untouched_epilogue(const SketchContext& ctx, const Sketch& sk, int st);

/// The stage a CPU tile of stage `st` is written by (the stage whose loops hold the tile): an
/// output first gets a local cache (`cache_write(st, "local")`: `st` is then the cache, computing
/// the tile, and the output is st + 1), else its untouched epilogue (untouched_epilogue).
int tile_output_stage(const SketchContext& ctx, Sketch& sk, int st);

/// The GPU row-group rules (SketchRowRules.cpp): an output computed a row per block with its row
/// reductions at the row (row_block, row_reduction) and its inputs' rows staged in shared memory
/// (row_fetch).
SketchRule row_block_rule();
/// Shared memory a row group's copies leave free for the scratch of its cross-thread reductions
/// (a value per warp and reduction: 128 bytes each at 1024 threads).
constexpr int64_t kRowReductionScratchBytes = 1024;
SketchRule row_reduction_rule();
SketchRule row_fetch_rule();

/// The GPU register read-cache rule (SketchReadCache.cpp), cache_read_local: the shared tiles of
/// a tiled stage also copied into registers at its innermost reduction loop (tutorial 05's AL and
/// BL), as a variant: the sketch without them stays.
SketchRule read_cache_rule();

/// The GPU tensor-core rule (SketchTensorCore.cpp): a float16/bfloat16 GEMM with float32
/// accumulation (float32 on tf32 with SketchOptions::tensor_core_tf32) on sm_80 or newer, tiled
/// as tutorials/07_tensor_core_gemm.py: warp accumulators, shared and warp tiles, tensorize.
SketchRule tensor_core_rule();

/// The Hopper tensor-core rule (SketchTensorCore.cpp): on sm_90a, a float16/bfloat16 GEMM whose
/// m, n and k are multiples of 64, tiled as tutorials/08_hopper_gemm.py step 4 (wgmma, TMA, a
/// persistent kernel), one sketch per block tile; the mma.sync rule applies as well.
SketchRule wgmma_rule();

/// The CPU dot-product rule (SketchCpuDot.cpp), multi_level_tiling_cpu_dot: a GEMM whose
/// product is a CPU dot intrinsic's on the task's target (cpu_dot_intrin_for: uint8 x int8 on
/// VNNI, bfloat16 on AVX512-BF16) tiled as the operator library's default on its dot path, with
/// open lengths: register tile rows, vectors of columns, panels per block of packed B.
SketchRule cpu_dot_rule();

/// The CPU blocked-tile rule (SketchBlocked.cpp), multi_level_tiling_blocked: a stage of five
/// output axes whose last is a block of whole vectors read densely (conv2d_nchwc's output) tiled
/// as the operator library's CPU default for it, one sketch for each of its loop orders, with
/// open lengths: the register tile's blocks and columns.
SketchRule blocked_rule();

}  // namespace tessel::internal
