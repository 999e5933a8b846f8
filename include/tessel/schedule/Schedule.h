// Schedules: how to compute a tensor-expression DAG.
//
//   Schedule s = create_schedule({C});
//   int c = s.stage_of(C);
//   s.split(c, 0, 32);                 // leaf 0 of stage c → (i.outer, i.inner) at 0 and 1
//   s.split(c, 2, 8);                  // leaf 2 (j) → (j.outer, j.inner) at 2 and 3
//   s.reorder(c, {0, 2, 1, 3, 4});     // i.outer, j.outer, i.inner, j.inner, k
//   s.vectorize(c, 3);
//
// A schedule is the DAG plus an ordered list of Steps (schedule/Step.h). Every primitive is
// validated against the state it would produce, applied, and recorded; the auto-scheduler's
// searcher calls the same code, so a step list replays on a fresh schedule of the same DAG and
// always yields the same state (and byte-identical lowered IR).
//
// ## Stages and iterators
// Stage `i` computes operation `i` of the DAG's topological order (te/Operation.h topo_order).
// Each stage has a loop nest of *leaf iterators*, outermost first; primitives address a stage by
// its index (or its tensor) and an iterator by its position in the current leaf list, as Ansor's
// steps do. Every iterator ever created is kept (with a stable id, its position in
// `Stage::iters`); relations (split, fuse) connect them back to the root axes, which are the
// compute's data-parallel axes followed by its reduction axes.
//
// cache_read, cache_write and rfactor insert stages (later indices shift by one) and rebuild the
// operations that read through them; `Stage::dag_op` keeps the DAG operation a stage computes,
// so the user's tensors still find their stages and the workload key is that of the DAG.
//
// Extents are known after every step (`Stage::iters[id].extent`), without lowering: constant for
// constant shapes, symbolic otherwise. The extents of stages attached with compute_at depend on
// the region their consumers need; `infer_extents()` computes them.
//
// ## Errors
// A misuse throws ScheduleError naming the primitive, the stage and the iterators, showing the
// stage's loop nest and, where it can, what would be legal. The schedule is unchanged after a
// failed primitive.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tessel/ir/IR.h"
#include "tessel/schedule/Step.h"

namespace tessel {

struct StageBounds;  // schedule/InferBounds.h

/// What an iterator iterates over.
enum class IterKind : uint8_t {
    Spatial,    ///< derived from data-parallel axes only
    Reduction,  ///< derived from reduction axes only
};

/// One loop of a stage's nest (current or former).
struct Iterator {
    std::string name;
    Expr extent;  ///< int32/int64; a constant unless the shape is symbolic
    IterKind kind = IterKind::Spatial;
    IterAnnotation annotation = IterAnnotation::None;
    /// The constant extent, if it is one.
    std::optional<int64_t> const_extent() const;
};

/// A relation between iterators (stable ids).
struct IterRelation {
    enum class Kind : uint8_t { Split, Fuse } kind;
    /// Split: parent → outer × inner, inner extent `factor`. Fuse: outer, inner → fused.
    int parent = -1, outer = -1, inner = -1, fused = -1;
    Expr factor;  ///< Split only: the inner extent at the time of the split
    TailStrategy tail = TailStrategy::Guard;
    bool by_nparts = false;  ///< Split only: `count` is the outer extent, not the inner one
    int64_t count = 0;       ///< Split only: the factor or the number of parts, as given
};

/// Where a stage is computed.
enum class AttachKind : uint8_t {
    Root,     ///< its own loop nest at the top level
    Inlined,  ///< substituted into its consumers
    At,       ///< inside another stage's loop (compute_at)
};

/// One dimension of a stage's storage (its buffer's layout), outermost first. A stage starts with
/// one Whole dimension per data-parallel axis, in order (compact row-major); storage_split,
/// storage_reorder and storage_align change it. Only the addresses change, never the DAG.
struct StorageDim {
    enum class Part : uint8_t { Whole, Outer, Inner } part = Part::Whole;
    int axis = 0;              ///< the data-parallel axis it stores (part of)
    int64_t factor = 0;        ///< Outer/Inner: the block size (the inner extent)
    int64_t align_factor = 0;  ///< storage_align: the stride is padded to
    int64_t align_offset = 0;  ///<   stride % align_factor == align_offset (0: no padding)
    bool operator==(const StorageDim&) const = default;
};

/// One stage: the loop nest of one operation.
struct Stage {
    Operation op;
    /// The DAG operation this stage computes, as the user's tensors name it: `op` is a rewritten
    /// copy once cache_read, cache_write or rfactor redirect its reads (stage_of uses both).
    Operation dag_op;
    std::vector<Iterator> iters;  ///< every iterator ever created; the id is the position
    std::vector<int> root;        ///< ids of the root axes: data-parallel, then reduction
    std::vector<int> leaf;        ///< ids of the current loop nest, outermost first
    std::vector<IterRelation> relations;
    std::vector<StorageDim> storage;  ///< the buffer's layout, outermost first (see StorageDim)
    AttachKind attach = AttachKind::Root;
    int attach_stage = -1;  ///< At: the consumer stage's index
    int attach_iter = -1;   ///< At: the consumer's iterator id
    /// At, by reverse_compute_at: `attach_stage` is a producer this stage reads, and the stage is
    /// computed inside that producer's loop after the loop's body (see reverse_compute_at).
    bool attach_after = false;
    int64_t auto_unroll_max_step = 0;  ///< pragma: auto-unroll inner loops up to this many steps
    bool is_output = false;            ///< one of the schedule's outputs
    StorageScope scope = StorageScope::Global;  ///< where the stage's buffer lives (set_scope,
                                                ///< cache_read/cache_write)
    bool double_buffer = false;                 ///< double_buffer: two copies, fetch pipelined
    int pipeline_depth = 0;  ///< pipeline: copies of the buffer, fetches by cp.async (0: none)
    bool tma = false;        ///< tma: the pipelined fetch is TMA's bulk tensor copies
    bool warp_specialized = false;  ///< warp_specialize: a producer warp group issues them
    bool tma_store = false;         ///< tma_store: the copy out of its shared stage is TMA's
    int swizzle_bits = 0;           ///< storage_swizzle: log2 of the phases (0: no swizzle)
    int tensorize_iter = -1;        ///< tensorize: the iterator id the intrinsic replaces from
    bool pre_transform = false;     ///< pre_transform: computed once, outside the kernel
    std::string tensorize_intrin;   ///< tensorize: the intrinsic's name (schedule/TensorIntrin.h)
    /// The operation's name.
    const std::string& name() const { return op->name; }
};

/// Limits that keep a schedule from hanging the compiler (configurable per schedule).
struct ScheduleLimits {
    int max_vector_lanes = 64;
    int64_t max_unroll = 512;  ///< unrolled extent of one loop, and the auto-unroll pragma
};

/// What applying a step made (Schedule::apply).
struct StepResult {
    /// The leaf positions of the loops the step made: split and follow_split (outer, inner),
    /// fuse (the fused loop); empty for the other kinds.
    std::vector<int> leaves;
    /// The index of the stage the step inserted (cache_read, cache_write, rfactor), or -1.
    int new_stage = -1;
};

/// The DAG plus the steps applied to it.
class Schedule {
public:
    /// A schedule with one root stage per operation of `outputs`' DAG and no steps.
    explicit Schedule(const std::vector<Tensor>& outputs, ScheduleLimits limits = {});

    // --- Primitives. `stage` is a stage index; `iter` a position in the stage's leaf list. ---
    /// Splits leaf `iter` into (outer, inner) with inner extent `factor`; returns their new leaf
    /// positions (outer, outer + 1).
    std::pair<int, int> split(int stage, int iter, int64_t factor,
                              TailStrategy tail = TailStrategy::Guard);
    /// Splits leaf `iter` into `nparts` outer iterations.
    std::pair<int, int> split_nparts(int stage, int iter, int64_t nparts,
                                     TailStrategy tail = TailStrategy::Guard);
    /// Fuses adjacent leaves (consecutive positions, outermost first, all spatial or all
    /// reduction) into one; returns its position (`iters[0]`).
    int fuse(int stage, const std::vector<int>& iters);
    /// Reorders the leaves: `order` lists leaf positions, each at most once, in their new order.
    /// Listing every leaf gives the new nest; listing some, they take the slots they held among
    /// themselves and the others stay (TVM's reorder: reorder(s, {3, 1}) swaps leaves 1 and 3).
    /// The recorded ReorderStep holds the whole permutation.
    void reorder(int stage, const std::vector<int>& order);
    /// Splits two leaves by (fx, fy) and reorders to (xo, yo, xi, yi); returns the position of xo.
    int tile(int stage, int x, int y, int64_t fx, int64_t fy);
    void vectorize(int stage, int iter);
    void unroll(int stage, int iter);
    void parallel(int stage, int iter);
    /// Any annotation: vectorize, unroll, parallel, or a GPU binding (as bind()).
    void annotate(int stage, int iter, IterAnnotation annotation);
    /// Binds leaf `iter` to a GPU thread axis: vthread, blockIdx.x/y/z or threadIdx.x/y/z
    /// (recorded as an AnnotateStep). A stage binds each blockIdx/threadIdx axis to at most one
    /// of its loops. A reduction leaf may only be bound to threadIdx.*: the stage then computes a
    /// cross-thread reduction (an all-reduce over the bound threads, `thread_allreduce` in
    /// ir/IR.h); blockIdx and vthread bindings of reduction leaves are refused.
    void bind(int stage, int iter, IterAnnotation thread_axis);
    /// Places the stage's buffer in `scope` (TVM's `s[T].set_scope("shared")`). A shared stage
    /// computed inside a kernel holds the region every thread of the block needs (bound inference
    /// relaxes the threadIdx and vthread loops around its attach point); a local one the region of
    /// one thread. Outputs stay global.
    void set_scope(int stage, StorageScope scope);
    /// Pragma: auto-unroll the stage's innermost loops up to `max_step` total steps.
    void pragma_auto_unroll(int stage, int64_t max_step);
    /// A stage pragma by name: "auto_unroll_max_step" (pragma_auto_unroll).
    void pragma(int stage, const std::string& key, int64_t value);
    /// Computes `stage` inside consumer `target` at the target's leaf `target_iter`.
    void compute_at(int stage, int target, int target_iter);
    /// TVM's reverse_compute_at: computes `stage`, a consumer of `target`, inside the target's
    /// leaf loop `target_iter`, after the target's body there. Its region is the points whose
    /// reads of the target fall in what one iteration of that loop wrote: each of the stage's
    /// data-parallel axes must read one target axis at exactly its own index (directly, or through
    /// stages computed inside it, which it reads at its own indices), and every other target
    /// axis must be summed whole by a reduction on the way (split-K's parts). Where such a
    /// summed axis is written by several iterations of the loops around `target_iter` (a GPU's
    /// blocks), the last iteration to finish a tile computes the stage's points for it: a
    /// counter per tile, kept zero between calls (docs/schedule.md, "reverse_compute_at").
    /// The target must be computed at the root. An output may be moved so; ScheduleError for a
    /// target the stage does not read, a pre-transformed stage, an inlined target or a loop that is
    /// not a leaf.
    void reverse_compute_at(int stage, int target, int target_iter);
    /// Substitutes `stage` into its consumers (not outputs, not reductions).
    void compute_inline(int stage);
    /// Computes `stage` in its own loop nest at the top level.
    void compute_root(int stage);
    /// Layout rewrite: `stage`, a "global" cache_read of a constant placeholder (a weight,
    /// PlaceholderOpNode::constant) or a stage computing each element from that placeholder alone
    /// without a reduction (Winograd's transformed filters, op/Conv.h), is computed once outside
    /// the kernel. It moves to the root
    /// (the whole tensor, in the stage's storage layout and with its own loops); lower() then
    /// makes the kernel read the laid-out buffer as the argument in the weight's place, and
    /// lower_pre_transform() the one-time function weight -> laid-out buffer. ScheduleError for
    /// any other stage; compute_at, compute_inline and set_scope refuse the stage afterwards.
    void pre_transform(int stage);

    // --- Caches, storage layouts, rfactor: these insert stages (later indices shift by one). ---
    /// Inserts a stage at `stage + 1` copying `stage`'s outputs into `scope` ("global", "shared",
    /// "local"); the stages `readers` (each must read `stage` directly) read the copy instead.
    /// `stage` may be a placeholder, not an inlined stage. Returns the new stage's index.
    int cache_read(int stage, const std::string& scope, const std::vector<int>& readers);
    /// Inserts a stage at `stage` computing the stage's body into `scope`; the original stage
    /// (now `stage + 1`, still what the user's tensor names) copies from it. Must come before
    /// loop transformations of the stage; not for placeholders or inlined stages. Returns the
    /// index of the new (cache) stage.
    int cache_write(int stage, const std::string& scope);
    /// Splits storage dimension `dim` of the stage's buffer into (outer, inner), inner extent
    /// `factor` (e.g. B[k][n] packed as [n/16][k][16]: storage_split(b, 1, 16), then
    /// storage_reorder(b, {1, 0, 2})). Only for stages the lowering allocates.
    void storage_split(int stage, int dim, int64_t factor);
    /// Permutes the storage dimensions: `order` lists every position once, in the new order.
    void storage_reorder(int stage, const std::vector<int>& order);
    /// Pads the stride of storage dimension `dim` so that stride % factor == offset (factor > 0,
    /// 0 <= offset < factor), e.g. to avoid shared-memory bank conflicts.
    void storage_align(int stage, int dim, int64_t factor, int64_t offset);
    /// Swizzles a shared stage's buffer (CUTLASS/Triton-style XOR layout): the 16-byte chunks of a
    /// row (its last storage dimension) are permuted by XOR with the row's phase, (row / per) %
    /// 2^bits, where per = max(1, 2^bits * 16 / row bytes) rows share a phase; so the 8 rows of an
    /// ldmatrix and a warp's 16-byte stores hit every bank without padding (bits = 3: 128 bytes,
    /// all 32 banks). 1 <= bits <= 3. Throws ScheduleError when the stage is already swizzled or
    /// padded (storage_align), is an output or inlined; its scope and row length (a multiple of
    /// 16 bytes, at least 32) are checked when the schedule is lowered.
    void storage_swizzle(int stage, int bits = 3);
    /// Double-buffers a shared stage computed at a serial loop of a GPU kernel: two copies of its
    /// buffer, the fetch for iteration i + 1 loaded into registers before iteration i computes
    /// and stored after it, one barrier per iteration. Where it is computed and its scope are
    /// checked when the schedule is lowered (every shared stage at that loop must be
    /// double-buffered).
    void double_buffer(int stage);
    /// Pipelines a shared stage computed at a serial loop of a GPU kernel over `depth` copies of
    /// its buffer (depth >= 2): the fetches of the next depth - 1 iterations are in flight as
    /// asynchronous copies (cp.async, sm_80 and newer) while an iteration computes, one barrier
    /// per iteration. Throws ScheduleError when depth < 2 or the stage is already pipelined or
    /// double-buffered; where it is computed, its scope and the target are checked when the
    /// schedule is lowered (every shared stage at that loop must be pipelined alike).
    void pipeline(int stage, int64_t depth);
    /// Fetches pipelined shared stage `stage` with TMA bulk tensor copies issued by one thread
    /// and awaited on mbarriers (TmaStep). Throws ScheduleError for an output, an inlined or a
    /// double-buffered stage; lowering checks the rest (pipelined, a plain copy of an argument,
    /// loops untouched, the layout a box can fill).
    void tma(int stage);
    /// Issues the tma() pipeline of `stage` from a producer warp group of its own
    /// (WarpSpecializeStep). Throws ScheduleError for a stage not fetched by tma() or already
    /// warp-specialized; lowering checks the rest (every stage of the pipeline alike, warp groups
    /// along threadIdx.z, no block barrier among the consumers).
    void warp_specialize(int stage);
    /// Stores global stage `stage`, a plain copy of a shared stage computed at one of its loops
    /// (a cache_write into "shared"), by TMA bulk tensor copies of the tile that one thread
    /// issues (TmaStoreStep). Throws ScheduleError for a stage that is not global, inlined or
    /// computed at another stage's loop, or is stored so already; lowering checks the rest (the
    /// shared stage, a plain copy with loops untouched, a layout boxes cover, the target).
    void tma_store(int stage);
    /// Replaces the stage's loops from leaf `iter` inwards by the tensor intrinsic `intrin`
    /// (schedule/TensorIntrin.h lists them), TVM's tensorize. The leaves from `iter` on must be
    /// the intrinsic's axes in order (same extents, spatial then reduction) and the stage's body
    /// its compute pattern (same operations and element types, reads of the same shape); a
    /// difference is a ScheduleError saying what differs. How the reads index their tensors
    /// (unit strides along the intrinsic's axes) is checked when the schedule is lowered. The
    /// intrinsics compute whole tiles: a loop that does not divide its axis (guarded points) is
    /// refused at lowering, except by `store_c`, whose guards on the tile's rows and columns
    /// become the store's limits (a tile at the edge of its tensor stores what lies inside).
    void tensorize(int stage, int iter, const std::string& intrin);
    /// Splits leaf `iter` by the factor of the SplitStep at index `src_step` of steps(); replayed
    /// with another factor at `src_step`, this split follows (Ansor's follow_split).
    std::pair<int, int> follow_split(int stage, int iter, int src_step);
    /// Splits leaf `iter` by the product of the factors of the earlier split steps `src_steps`
    /// (splits by a factor, follow_splits, follow_fused_splits): the loop follows all of them
    /// when a searcher mutates their factors (Ansor's follow_fused_split). The inner loop has the
    /// product as its extent, points past the end guarded.
    std::pair<int, int> follow_fused_split(int stage, int iter, const std::vector<int>& src_steps);
    /// Factors the reduction over leaf `iter` (the outer or inner part of a split reduction axis)
    /// into a new stage at index `stage` whose output has that loop as data-parallel dimension
    /// `factor_axis`; the original stage (now `stage + 1`) reduces the partial results. Fresh
    /// loop nests for both. Works for every reducer (sum, max, min, prod, argmax, comm_reducer).
    /// Returns the new (rfactor) stage's index.
    int rfactor(int stage, int iter, int factor_axis);
    /// Rebuilds reduction `stage` (one output, fresh loops, nothing computed inside it) over
    /// groups of its loops: `order` lists every loop position (data-parallel axes, then
    /// reduction axes), `groups` the sizes of consecutive runs of it that fuse into one axis,
    /// data-parallel groups first (a group's index is its loops' mixed-radix number). Inserts at
    /// `stage` one gather stage per distinct tensor read of the body that uses a loop (the read
    /// at the digits of the groups its indices use, those groups its axes in group order), then
    /// the stage over the groups; the original stage (last, still what the user's tensor names)
    /// copies out of it. Reads under a condition are refused. Returns the new stage's index.
    int reindex(int stage, const std::vector<int>& order, const std::vector<int>& groups);

    /// Applies one step (validated as the primitive would be), recording it; says what it made.
    StepResult apply(const Step& step);

    // --- Queries ---
    const std::vector<Stage>& stages() const { return stages_; }
    const Stage& stage(int index) const;
    /// The stage computing tensor `t` (ScheduleError if `t` is not of this DAG): the stage whose
    /// op or dag_op is t's operation.
    int stage_of(const Tensor& t) const;
    /// The stage computing operation `op` (ScheduleError if it is not of this DAG), likewise: its
    /// stage now, after cache stages or rfactor have moved it.
    int stage_of(const Operation& op) const;
    const std::vector<Step>& steps() const { return steps_; }
    const std::vector<Tensor>& outputs() const { return outputs_; }
    const ScheduleLimits& limits() const { return limits_; }
    /// The DAG's workload key: a canonical structural hash, independent of names.
    uint64_t workload_key() const { return workload_key_; }
    /// The leaf loop extents of every stage, after inferring the regions of compute_at stages.
    std::vector<std::vector<Expr>> infer_extents() const;
    /// The stage's loop nest, one line per leaf: "for i.outer in range(0, 32):  # parallel".
    std::string loop_nest_string(int stage) const;
    /// The steps as a runnable Python scheduling script.
    std::string to_python() const;
    /// {"workload_key": "<hex>", "steps": [...]}: what a tuning record stores.
    std::string to_json() const;

private:
    // The stage whose op, or else dag_op, is `op`; -1 when none is.
    int find_stage(const Operation& op) const;
    friend struct ScheduleAccess;
    friend std::vector<StageBounds> infer_bounds(const Schedule& s);

    // The schedule's bounds (infer_bounds), kept from the first time they are inferred until a
    // step changes the schedule: a searcher asks for one candidate's several times (annotation,
    // the shared-memory check, verification, lowering for features), each costing milliseconds
    // on a GPU convolution. A copy keeps them (the same state); threads may read one schedule at
    // once.
    class BoundsMemo {
    public:
        using Bounds = std::shared_ptr<const std::vector<StageBounds>>;
        BoundsMemo() = default;
        BoundsMemo(const BoundsMemo& other) : bounds_(other.get()) {}
        BoundsMemo& operator=(const BoundsMemo& other) {
            if (this != &other) set(other.get());
            return *this;
        }
        Bounds get() const {
            std::lock_guard<std::mutex> lock(mutex_);
            return bounds_;
        }
        void set(Bounds bounds) const {
            std::lock_guard<std::mutex> lock(mutex_);
            bounds_ = std::move(bounds);
        }
        void reset() { set(nullptr); }

    private:
        mutable std::mutex mutex_;
        mutable Bounds bounds_;
    };

    void record(const Step& step) {
        steps_.push_back(step);
        bounds_memo_.reset();
    }
    std::vector<Tensor> outputs_;
    std::vector<Stage> stages_;
    std::vector<Step> steps_;
    ScheduleLimits limits_;
    uint64_t workload_key_ = 0;
    BoundsMemo bounds_memo_;
};

/// A schedule of the DAG of `outputs`.
Schedule create_schedule(const std::vector<Tensor>& outputs, ScheduleLimits limits = {});

/// Replays `steps` on a fresh schedule of `outputs`. Throws ScheduleError if a step does not
/// apply.
Schedule replay(const std::vector<Tensor>& outputs, const std::vector<Step>& steps,
                ScheduleLimits limits = {});
/// Replays `steps` on a copy of `base`, a schedule without steps: what a searcher does for every
/// candidate. The DAG is not walked or hashed again (the copy shares it), so a replay costs only
/// its steps.
Schedule replay(const Schedule& base, const std::vector<Step>& steps);
/// Replays Schedule::to_json's output; throws ScheduleError if it was recorded for another DAG
/// (its workload key differs) or a step does not apply.
Schedule schedule_from_json(const std::vector<Tensor>& outputs, const std::string& json,
                            ScheduleLimits limits = {});
/// Replays Schedule::to_json's output on a copy of `base` (a schedule without steps), after the
/// same check of the workload key.
Schedule schedule_from_json(const Schedule& base, const std::string& json);

/// The canonical structural hash of a DAG (the workload key).
uint64_t dag_hash(const std::vector<Tensor>& outputs);

}  // namespace tessel
