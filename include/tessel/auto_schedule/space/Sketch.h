// Sketches: the skeletons of the search space (Ansor, OSDI 2020, section 4.1).
//
//   SearchTask task("matmul", {int64_t(512), int64_t(512), int64_t(512), Float(32)},
//   Target("llvm")); std::vector<Sketch> sketches = generate_sketches(task);   // 3 for a matmul on
//   a CPU sketches[0].trace;            // {"C: cache_write", "C.local:
//   multi_level_tiling_with_fusion(1)"}
//
// generate_sketches walks the stages from the last (an output) back to the first, trying the
// rules in order on each stage. A rule's condition says whether it applies to the stage and
// how: Skip (try the next rule), Apply (branch: the rule's sketches go on, and the stage also
// goes on to the next rule unchanged) or ApplyAndSkipRest (the rule's sketches go on alone).
// A rule returns the sketches it made, each with the stage the walk continues at. Sketches
// whose walk passed the first stage are complete.
//
// A sketch is a real Schedule whose open split lengths are 1: its step list is the prefix of
// every schedule annotated from it. What random annotation fills in is explicit in the sketch's
// data, not found again in the steps: `tiles` lists each tiled axis with the split steps of its
// levels, and `stages` says for each stage what it is (tiled, a consumer a tiled stage is fused
// into, a cross-thread reduction, a shared-memory fetch, ...) with the leaf positions and step
// indices its annotation needs. docs/auto_schedule.md lists the rules with examples.
//
// Users add rules (condition + apply) through SketchOptions::rules, tried before the built-in
// ones; the tiling structures are options too.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessel/auto_schedule/task/SearchTask.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/DAGAnalysis.h"

namespace tessel {

/// One tiled loop of a sketch whose split lengths annotation chooses: the loop of `extent`
/// iterations is split into `steps.size() + 1` levels; `steps[k]` (an index into the sketch's
/// steps, a split by a factor) makes level k + 1 (its inner loop). Level 0's extent is what the
/// others leave: extent / (product of the factors). Annotation picks factorisations of `extent`
/// whose innermost length is at most `max_innermost` (0: no limit).
struct TileGroup {
    int64_t extent = 1;
    std::vector<int> steps;
    int64_t max_innermost = 0;
    /// The stage whose loop it is (an index into the sketch's stages).
    int stage = 0;
};

/// What a stage of a sketch is; what annotation does with it (docs/auto_schedule.md).
enum class SketchStageKind : uint8_t {
    Plain,    ///< no rule tiled it: its compute location (CPU), parallel loops, vectorisation,
              ///< or a simple thread binding (GPU) are chosen at annotation
    Inlined,  ///< computed inline
    Tiled,    ///< multi-level tiled (its own root loop nest or inside a fused consumer)
    Fused,    ///< an element-wise consumer that a tiled stage is computed inside; tiled at the
              ///< producer's outer levels by follow splits
    CrossThreadReduction,  ///< GPU: its reduction split, the inner part bound to threadIdx.x
    SharedFetch,           ///< GPU: a shared-memory copy computed inside the stage it feeds
    Placeholder,           ///< an input
    /// GPU: an output of rows (softmax's divide) whose row reductions are computed at its row:
    /// leaves [rows fused, last axis]; a block (or warp) per row, the row over its threads
    RowBlock,
    /// GPU: a reduction computed at a RowBlock stage's row loop (compute_at), its reduction loops
    /// fused into one that annotation splits by the row's thread count (threadIdx.x)
    RowReduction,
    /// GPU: a shared-memory copy of one row of an input the row group reads more than once,
    /// computed at the RowBlock stage's row loop and fetched by its threads
    RowFetch,
    /// GPU: a stage of the tensor-core GEMM sketches (SketchTensorCore.cpp) scheduled completely
    /// by the sketch: the output (its fragments stored by store_c), the warp accumulator
    /// (mma.sync, or wgmma on sm_90a) and the warp fragments of A and B (ldmatrix; none for
    /// wgmma, which reads the shared tiles); annotation leaves its loops alone
    TensorCore,
    /// GPU: a shared-memory tile of A or B in the tensor-core sketch, computed at the
    /// accumulator's outer k loop; annotation pads its rows (storage_align) and copies it with
    /// 128-bit accesses by the block's warps (threadIdx.x = 32, .y and .z following the warp
    /// tile splits in `thread_steps`)
    TensorCoreFetch,
    /// GPU: a shared-memory tile of A or B in the wgmma sketch (sm_90a), computed at the
    /// accumulator's k-tile loop, swizzled and fetched by TMA; annotation chooses its pipeline's
    /// depth (2 to 8) and whether a producer warp group issues it (warp_specialize)
    WgmmaFetch,
    /// GPU: a register ("local") copy of a SharedFetch tile, computed at the tiled stage's
    /// innermost reduction loop (`read_cache_at`): one thread's slice of the shared tile per
    /// step of the reduction (tutorial 05's AL and BL). Annotation vectorises it (1, 2 or 4
    /// lanes) and chooses its shared tile's layout (transposed, padded)
    ReadCache,
    /// CPU: the accumulator of the dot-product GEMM sketch (SketchCpuDot.cpp), computed at its
    /// output's panel loop, [k / group, rows, vectors, lanes, k % group] with the last two
    /// tensorized (vpdpbusd, vdpbf16ps); annotation leaves it alone
    CpuDot,
    /// CPU: the output of the dot-product GEMM sketch (or its element-wise epilogue), [j blocks,
    /// i tiles, panels, rows, vectors, lanes]; annotation parallelises its blocks or its row
    /// tiles and rejects tiles whose accumulators do not fit the vector registers
    CpuDotOutput,
    /// CPU: B packed for the dot-product GEMM sketch at its output's block loop, storage
    /// [j / lanes][k / group][j % lanes][k % group]; parallel with the row tiles
    CpuDotPack,
    /// CPU: a computed A of the dot-product GEMM sketch, kept at the root (the instruction
    /// reads its rows from memory): parallel loops and vectorisation as a Plain stage's
    CpuDotOperand,
    /// CPU: the accumulator of the blocked-tile sketch (SketchBlocked.cpp), computed inside its
    /// output's tile, its register tile unrolled and vectorised; annotation leaves it alone
    Blocked,
    /// CPU: the output of the blocked-tile sketch (or its element-wise epilogue), [outer loops
    /// fused (parallel), (rows,) column tiles, blocks, columns, block]; annotation rejects tiles
    /// whose accumulators do not fit the vector registers
    BlockedOutput,
};

/// Whether a GPU tiled stage's shared tiles also get register read caches (the cache_read_local
/// rule decides it for all of a stage's tiles at once: the sketch with them is a variant).
enum class ReadCaches : uint8_t { Undecided, Without, With };

/// The annotation data of one stage of a sketch.
struct SketchStage {
    SketchStageKind kind = SketchStageKind::Plain;
    /// Tiled (root) and Fused: the leaf positions of the spatial tile levels, outermost level
    /// first (a CPU stage parallelises level 0; a GPU stage binds levels 0, 1, 2 to blockIdx.x,
    /// vthread and threadIdx.x).
    std::vector<std::vector<int>> levels;
    /// Tiled: the split steps of its thread level (GPU), whose product a SharedFetch stage of its
    /// producers follows; SharedFetch: the steps it follows; TensorCoreFetch: the split steps of
    /// the warps along n and along m (threadIdx.y, threadIdx.z).
    std::vector<int> thread_steps;
    /// CrossThreadReduction: the tile group of its reduction split (inner part: threads).
    int reduction_tile = -1;
    /// Tiled (GPU): the leaf its SharedFetch producers are computed at (its outer reduction tile).
    int fetch_at = -1;
    /// Tiled (GPU): the leaf its ReadCache stages are computed at (the last loop of its last
    /// reduction level: the innermost reduction loop around the thread's tile), and whether it
    /// has them.
    int read_cache_at = -1;
    ReadCaches read_caches = ReadCaches::Undecided;
    /// Tiled: whether annotation chooses an auto-unroll pragma for it.
    bool unroll = false;
    /// Made by the cache_write rule: computes the next stage's body, which copies it out.
    bool write_cache = false;
    /// Made by the implicit_gemm rule (Schedule::reindex): a gather of one operand of the
    /// product, inlined into its shared-memory fetch (the im2col computed in the tile copies).
    bool gather = false;
    /// TensorCore (the output stage): its tile groups (indices into Sketch::tiles) of m and n,
    /// levels (blocks, warps, fragments per warp), and of k, levels (shared tiles, fragments per
    /// shared tile); the lengths count fragments (16 rows, `tensor_core_n` columns, 16 or 8 k).
    std::vector<int> tensor_core_tiles;
    /// TensorCore (the output stage): columns of n per unit of its n tile group.
    int64_t tensor_core_n = 0;
};

/// A sketch (see the file comment).
struct Sketch {
    Schedule schedule;                ///< the sketch's steps applied, open lengths at 1
    std::vector<TileGroup> tiles;     ///< the open split lengths
    std::vector<SketchStage> stages;  ///< per stage of `schedule`
    /// The rules applied, in order: "<stage name>: <rule>" (golden tests compare these).
    std::vector<std::string> trace;

    explicit Sketch(Schedule s);

    /// Applies `step` to `schedule` and, when it inserts stages (cache_read, cache_write,
    /// rfactor: one; reindex: its gathers and the product), gives each a Plain entry in `stages`
    /// (tile groups renumbered): how a rule that inserts stages keeps the sketch's data in step
    /// with its schedule.
    StepResult apply(const Step& step);
};

/// What a rule's condition says (see the file comment).
enum class RuleCondition : uint8_t { Skip, Apply, ApplyAndSkipRest };

/// The inputs every rule sees.
struct SketchContext {
    const SearchTask& task;
    const DAGAnalysis& dag;
    std::string cpu_tiling;         ///< SketchOptions::cpu_tiling
    std::string gpu_tiling;         ///< SketchOptions::gpu_tiling
    bool tensor_core_tf32 = false;  ///< SketchOptions::tensor_core_tf32
    bool gpu() const { return task.target().is_gpu(); }
    /// The DAG operation index of stage `stage` of `s`, or -1 for a stage the schedule inserted
    /// (a cache or rfactor stage).
    int dag_index(const Schedule& s, int stage) const;
    /// The operations inlined in `s`, by DAG index (what DAGAnalysis's consumer queries take).
    std::vector<bool> inlined(const Schedule& s) const;
};

/// A sketch rule: a named condition and its application (see the file comment).
struct SketchRule {
    std::string name;
    std::function<RuleCondition(const SketchContext&, const Sketch&, int stage)> condition;
    /// The sketches made, each with the stage index the walk continues at (normally stage - 1).
    std::function<std::vector<std::pair<Sketch, int>>(const SketchContext&, const Sketch&,
                                                      int stage)>
        apply;
};

/// Options of sketch generation.
struct SketchOptions {
    /// The multi-level tiling structure on CPUs: S a spatial level, R a reduction level, outer
    /// first (Ansor's "SSRSRS"). At least one S and one R.
    std::string cpu_tiling = "SSRSRS";
    /// The structure on GPUs; its first three S levels are bound to blockIdx.x, vthread and
    /// threadIdx.x (Ansor's "SSSRRSRS").
    std::string gpu_tiling = "SSSRRSRS";
    /// Whether the tensor-core rule (multi_level_tiling_tensor_core) also takes float32 GEMMs, on
    /// tf32 tensor cores (10 mantissa bits: not float32's results). Off: float32 stays on the
    /// plain rules.
    bool tensor_core_tf32 = false;
    /// Rules tried before the built-in ones, in order.
    std::vector<SketchRule> rules;
};

/// The sketches of `task` (see the file comment), in a deterministic order. ScheduleError for a
/// bad tiling structure; a rule that throws ScheduleError on a stage is skipped there.
std::vector<Sketch> generate_sketches(const SearchTask& task, const SketchOptions& options = {});

/// The built-in rules for `target` (CPU or GPU), in the order they are tried.
std::vector<SketchRule> builtin_sketch_rules(const Target& target);

/// Tiles stage `stage` of `sketch` with `structure` (as SketchOptions::cpu_tiling), splitting
/// every spatial and reduction axis into its levels with open lengths, and records it in
/// `sketch.tiles` and `sketch.stages` (kind Tiled). For rules that tile. ScheduleError for a bad
/// structure.
void tile_stage(Sketch& sketch, int stage, const std::string& structure, int64_t max_innermost);

}  // namespace tessel
