// Random annotation's rules and the tile-size helpers mutation shares (not public).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tessel/auto_schedule/space/SearchSpace.h"

namespace tessel::internal {

/// A uniform draw from [0, n) (n >= 1): the annotation and mutation rules' choices.
inline int64_t pick(std::mt19937_64& rng, int64_t n) {
    return std::uniform_int_distribution<int64_t>(0, n - 1)(rng);
}

/// The stage a step applies to.
inline int step_stage(const Step& step) {
    return std::visit([](const auto& s) { return s.stage; }, step);
}

/// What an annotation rule works on: the schedule replayed from the sketch with its tile sizes
/// filled in, which the rule extends with steps.
struct AnnotateContext {
    AnnotateContext(const SearchSpace& space_, const SketchContext& space_ctx_,
                    const Sketch& sketch_, Schedule& schedule_, std::mt19937_64& rng_)
        : space(space_), space_ctx(space_ctx_), sketch(sketch_), schedule(schedule_), rng(rng_) {}

    const SearchSpace& space;
    const SketchContext& space_ctx;
    const Sketch& sketch;
    Schedule& schedule;
    std::mt19937_64& rng;

    /// The leaf extents of stage `stage` (Schedule::infer_extents), inferred when first asked for
    /// and again only after a rule made them stale: bound inference is most of an annotation's
    /// cost.
    const std::vector<Expr>& extents_of(int stage);
    /// A rule changed the loops of `stage` (fuse, split, bind): its row is inferred again when
    /// asked for. The other rows stand: a stage computed inside another keeps the region of one
    /// iteration of its attach loop, whatever happens to the loops around it.
    void loops_changed(int stage);
    /// A rule changed where stages are computed: every row is inferred again.
    void attachments_changed();
    /// Extents inferred by the caller for the schedule as it is now.
    void set_extents(std::vector<std::vector<Expr>> extents);

private:
    std::vector<std::vector<Expr>> extents_;
    std::vector<bool> stale_;
};

/// One annotation rule: a name (rejection reasons name it) and the function.
struct AnnotateRule {
    const char* name;
    std::function<void(AnnotateContext&)> apply;
};

/// The rules for `target`, in order (CPU: cpu_dot, blocked, compute_location, parallel,
/// auto_unroll, vectorize; GPU: thread_bind, cooperative_fetch, read_caches, tensor_core,
/// pipelining, auto_unroll, vectorize_store).
std::vector<AnnotateRule> annotate_rules(const Target& target);

/// GPU: binds a RowBlock stage (a block per row, the row over a drawn thread count and vector
/// width) and the RowReduction and RowFetch stages computed at its row (AnnotateRows.cpp).
void bind_row_block(AnnotateContext& a, int stage);

/// GPU: annotates the TensorCore and TensorCoreFetch stages of a tensor-core sketch
/// (AnnotateTensorCore.cpp): rejects warp tiles whose accumulators exceed
/// kMaxAccumulatorsPerLane, pads the shared tiles' rows or not (storage_align, 16 bytes) and
/// copies them with 128-bit accesses by the block's warps. The WgmmaFetch tiles of a wgmma
/// sketch get a producer warp group (warp_specialize) or not, both alike.
void annotate_tensor_core(AnnotateContext& a);

/// CPU: annotates the CpuDotOutput stages of a dot-product sketch (AnnotateCpuDot.cpp): rejects
/// register tiles whose accumulators, B's vectors and A's broadcast exceed the vector registers,
/// and parallelises the column blocks or the row tiles (then the pack of B too), drawn among
/// those with more than one iteration.
void annotate_cpu_dot(AnnotateContext& a);

/// CPU: ScheduleError (naming `sketch`) unless a register tile of `rows` x `vectors`
/// accumulators, `lanes` elements of stage `q`'s output type each, a vector of the streamed
/// operand for each of its vectors and a broadcast of the other fit the vector registers (32
/// with 512-bit vectors, 16 with 256-bit ones), as the defaults' tiles do.
void check_register_tile(const Schedule& s, int q, const char* sketch, int64_t rows,
                         int64_t vectors, int64_t lanes);

/// CPU: annotates the BlockedOutput stages of a blocked-tile sketch (AnnotateBlocked.cpp):
/// rejects register tiles of m blocks x ut columns whose accumulators, the blocks' weight vectors
/// and the input's broadcast exceed the vector registers.
void annotate_blocked(AnnotateContext& a);

/// GPU: the register read caches of a cache_read_local sketch (AnnotateReadCache.cpp): each
/// shared tile's layout drawn among layout_choices(), each copy vectorised (1, 2 or 4 lanes)
/// along its slice's axis where the layout makes that axis contiguous.
void read_caches(AnnotateContext& a);

/// A ReadCache stage and its shared tile, as its annotation sees them.
struct ReadCacheTile {
    int cache = -1;     ///< the ReadCache stage
    int shared = -1;    ///< the shared tile it copies
    int dims = 0;       ///< the shared tile's storage dimensions
    int axis = -1;      ///< the last axis along which a thread's slice is longer than 1, or -1
    int64_t slice = 1;  ///< the slice's length along `axis`
};
/// The tile of ReadCache stage `cache` of `s`, whose leaves are still its axes with `extents`
/// (bound inference's, as annotation sees them before the rule).
ReadCacheTile read_cache_tile(const Schedule& s, int cache, const std::vector<Expr>& extents);
/// A shared tile's layout: bits of kTransposed (`axis` moved innermost, storage_reorder) and
/// kPadded (rows padded by 16 bytes to an odd number of 16-byte chunks, storage_align).
constexpr int kTransposed = 1;
constexpr int kPadded = 2;
/// The layouts a tile may take: 0 always; transposed where `axis` is not innermost already;
/// padded (either way) where the tile has two dimensions or more.
std::vector<int> layout_choices(const ReadCacheTile& t);
/// The steps that give the tile `layout` (none for 0).
std::vector<Step> layout_steps(const Schedule& s, const ReadCacheTile& t, int layout);
/// The vector lanes the copy of a read cache may take under `layout`: 1, and 2 and 4 where they
/// divide the slice (at most 16 bytes) and the layout makes the slice's axis contiguous.
std::vector<int64_t> read_cache_lanes(const Schedule& s, const ReadCacheTile& t, int layout);
/// The steps that vectorise the copy by `lanes` (none for 1): its axis moved innermost, split,
/// the inner loop vectorised. `s` has the cache's leaves still its axes.
std::vector<Step> read_cache_vector_steps(const Schedule& s, const ReadCacheTile& t, int64_t lanes);

/// Accumulator floats a lane of a tensor-core warp tile may hold (tutorial 07's 64 x 64 warp
/// tile: 128, with its fragments of A and B about 170 registers).
constexpr int64_t kMaxAccumulatorsPerLane = 128;

/// How far the tile sizes in `steps` of the tensor-core output stage `info` are from a useful
/// launch (as gpu_tile_misses): INT_MAX for more threads than a block may have, 4 misses for more
/// accumulators per lane than kMaxAccumulatorsPerLane, 1 for fewer blocks than the SMs (while
/// the output has 16 times as many 16 x 16 tiles).
int tensor_core_tile_misses(const SearchSpace& space, const Sketch& sketch, const SketchStage& info,
                            const std::vector<Step>& steps);

/// Whether the stage is a shared-memory tile a tiled or tensor-core stage fetches (SharedFetch,
/// TensorCoreFetch, WgmmaFetch): what the pipelining rule and mutation choose for.
bool is_shared_fetch(const SketchStage& info);

/// A shared fetch's pipelining choice: none, double_buffer, or pipeline(depth) for depth >= 2.
constexpr int64_t kNoPipelining = 0;
constexpr int64_t kDoubleBuffer = 1;
/// The choices for `target` and the fetches' kind: none and double_buffer, and pipeline depth 2,
/// 3, 4 on sm_80 and newer; a WgmmaFetch (TMA, whose copies need a pipeline) depth 2 to 8.
std::vector<int64_t> pipelining_choices(const Target& target, SketchStageKind kind);
/// Copies of the buffer a choice keeps in shared memory.
int64_t pipelining_copies(int64_t choice);
/// Applies `choice` to shared stage `stage` (nothing for kNoPipelining).
void apply_pipelining(Schedule& s, int stage, int64_t choice);

/// GPU: the lanes of the vectorised store of an output stage whose innermost loop has `extent`
/// iterations: the widest of 4 and 2 that divides it, else 1 (not vectorised).
int64_t store_lanes(int64_t extent);

/// The auto-unroll pragma values annotation and mutation choose from.
const std::vector<int64_t>& auto_unroll_choices(const Target& target);

/// Elements the CPU vectorize rule fuses into one vector at most: the vector unit's bytes (a
/// vector of 4 registers of 32-bit lanes, as MetaSchedule's 64 on AVX-512), at least 16.
int64_t max_vector_lanes(const HardwareParams& hw);

/// Sets every tile group's split factors in `steps` (a copy of the sketch's) at random: on GPUs
/// uniformly over the factorisations, on CPUs the innermost length first (uniformly over the
/// lengths possible), then uniformly over the factorisations ending in it.
void fill_tile_sizes(const SearchSpace& space, const Sketch& sketch, std::vector<Step>& steps,
                     std::mt19937_64& rng);

/// Outputs one GPU thread computes at most in a tiled stage (vthreads and inner tiles), for a
/// draw to count as useful: its accumulators stay in registers and NVRTC unrolls it quickly.
constexpr int64_t kMaxOutputsPerThread = 64;

/// How far a GPU sketch's tile sizes in `steps` (the sketch's, filled in) are from a useful
/// launch, per tiled stage: one miss each for fewer threads per block than a warp, fewer blocks
/// than the SMs (each while the output has that many points), and more than
/// kMaxOutputsPerThread outputs per thread; INT_MAX for more threads per block than the target
/// allows. Cheap (no replay): annotation draws until it is 0 (SearchSpace.cpp).
int gpu_tile_misses(const SearchSpace& space, const Sketch& sketch, const std::vector<Step>& steps);

/// Whether the shared-memory fetches of `s` (the sketch replayed with its tile sizes) fit the
/// target's shared memory per block (the opt-in limit the runtime asks for; bound inference).
/// Annotation draws tile sizes again until both checks pass (rejection sampling: uniform over
/// the passing ones).
/// `extents`, when given, receives the leaf extents it inferred (left empty when it needed none).
bool gpu_shared_memory_fits(const SearchSpace& space, const Sketch& sketch, const Schedule& s,
                            std::vector<std::vector<Expr>>* extents = nullptr);

/// Writes `lengths` (outer level first; the first is implied) into g's split steps.
void set_tile_lengths(std::vector<Step>& steps, const TileGroup& g,
                      const std::vector<int64_t>& lengths);

/// The lengths of g's levels in `steps`, outer level first.
std::vector<int64_t> tile_lengths(const std::vector<Step>& steps, const TileGroup& g);

}  // namespace tessel::internal
