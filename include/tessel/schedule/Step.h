// Steps: the schedule as data.
//
// Every schedule primitive appends one Step (tile appends two splits and a reorder). Steps
// address stages by index and iterators by their position in the stage's leaf list at the time
// the step is applied, as Ansor's do, so a step list replays deterministically on a fresh
// schedule of the same DAG, serialises to JSON, and can be mutated by the auto-scheduler.
// cache_read, cache_write and rfactor insert a stage: later stage indices shift by one, and the
// steps recorded before stay valid because a list replays in order. follow_split refers to an
// earlier split step by its index in the list, so a mutated factor there carries over.
//
// ## Fields described once
// Each step kind names itself (`kind`) and describes its fields once, in `fields()`: the field's
// name and its role (a stage, a leaf of a stage, a list of leaves, a storage dimension, a number,
// a choice among named values, ...). The JSON reader and writer (StepJson.cpp), the Python printer
// (ToPython.cpp) and the Python bindings (python/src/PySchedule.cpp, which converts each argument
// by its role) are generic over that description; none of them lists the fields again.
//
// Adding a primitive touches: its struct here (with `kind` and `fields()`) and the Step variant;
// the primitive in src/schedule/*Primitives.cpp (or RFactor.cpp) and its line in Schedule::apply;
// and a case in tests/unit/schedule_steps_test.cpp.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tessel {

enum class StorageScope : uint8_t;  // ir/IR.h
/// "global", "shared", "local" (ir/IR.h).
const char* scope_name(StorageScope s);

/// How a loop is executed; the annotation of an iterator.
enum class IterAnnotation : uint8_t {
    None,
    Unroll,
    Vectorize,
    Parallel,
    VThread,
    BlockX,
    BlockY,
    BlockZ,
    ThreadX,
    ThreadY,
    ThreadZ,
};
/// "none", "unroll", "vectorize", "parallel", "vthread", "blockIdx.x", ..., "threadIdx.z".
const char* annotation_name(IterAnnotation a);
/// Whether `a` binds a loop to a GPU block axis (blockIdx.x-z), to a thread axis (threadIdx.x-z),
/// or to either: a launch axis, one of the kernel's grid dimensions.
inline bool is_block_axis(IterAnnotation a) {
    return a >= IterAnnotation::BlockX && a <= IterAnnotation::BlockZ;
}
inline bool is_thread_axis(IterAnnotation a) {
    return a >= IterAnnotation::ThreadX && a <= IterAnnotation::ThreadZ;
}
inline bool is_launch_axis(IterAnnotation a) {
    return is_block_axis(a) || is_thread_axis(a);
}

/// What a split does when the factor does not divide the extent.
enum class TailStrategy : uint8_t {
    Guard,         ///< a `likely(...)` guard skips the points past the end (default)
    ShiftInwards,  ///< the last outer iteration shifts back and recomputes points (pure stages)
    RoundUp,       ///< computes past the end into padded storage (intermediate stages only)
};
const char* tail_strategy_name(TailStrategy t);

/// The named values of the enumerations step fields hold (for parsing and error messages), and
/// their names: `choice_name(v)` is annotation_name, tail_strategy_name or scope_name.
std::span<const IterAnnotation> choice_values(IterAnnotation);
std::span<const TailStrategy> choice_values(TailStrategy);
std::span<const StorageScope> choice_values(StorageScope);
inline const char* choice_name(IterAnnotation a) {
    return annotation_name(a);
}
inline const char* choice_name(TailStrategy t) {
    return tail_strategy_name(t);
}
inline const char* choice_name(StorageScope s) {
    return scope_name(s);
}
/// What a value of the enumeration is, for messages: "annotation", "tail strategy", "storage
/// scope".
inline const char* choice_kind(IterAnnotation) {
    return "annotation";
}
inline const char* choice_kind(TailStrategy) {
    return "tail strategy";
}
inline const char* choice_kind(StorageScope) {
    return "storage scope";
}

// How `fields(step, v)` describes a field to a visitor `v` (every visitor has these members;
// `Int` is `int` or `const int`, and so on, as the step is mutable or not):
//   v.stage(name, Int& stage)                    a stage index
//   v.stages(name, IntVector& stages)            a list of stage indices
//   v.leaf(name, Int& pos, int stage)            a leaf position of stage `stage`
//   v.leaves(name, IntVector& pos, int stage)    consecutive leaf positions (fuse)
//   v.leaf_order(name, IntVector& order, int stage)  a permutation of the leaves (reorder)
//   v.dim(name, Int& dim, int stage)             a storage dimension of stage `stage`
//   v.dim_order(name, IntVector& order, int stage)   a permutation of the storage dimensions
//   v.number(name, Number& value)                an integer (int or int64_t)
//   v.number(name, Number& value, default)       an integer that may be left out
//   v.text(name, String& value)                  a string (a pragma key, a cache scope)
//   v.choice(name, Enum& value)                  one of choice_values(Enum{})
//   v.choice(name, Enum& value, default)         ... that may be left out
//   v.step_index(name, Int& index)               an index into the schedule's step list
//   v.step_indices(name, IntVector& indices)     indices into the schedule's step list
//   v.numbers(name, IntVector& values)           a list of integers (reindex's group sizes)
//   v.split_factor(factor_name, nparts_name, Int64& factor, Bool& by_nparts)
//                                                a split's factor, or its number of outer parts
// Fields are described in order: the index a leaf or a dimension belongs to comes first.

#define TESSEL_STEP(Name, kind_name)               \
    static constexpr const char* kind = kind_name; \
    bool operator==(const Name&) const = default;

/// Splits leaf `iter` by `factor` (inner extent), or into `factor` outer parts when by_nparts.
struct SplitStep {
    int stage = 0, iter = 0;
    int64_t factor = 0;
    bool by_nparts = false;
    TailStrategy tail = TailStrategy::Guard;
    TESSEL_STEP(SplitStep, "split")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.leaf("iter", s.iter, s.stage);
        v.split_factor("factor", "nparts", s.factor, s.by_nparts);
        v.choice("tail", s.tail, TailStrategy::Guard);
    }
};
/// Fuses adjacent leaves `iters` (consecutive positions, outermost first) into one.
struct FuseStep {
    int stage = 0;
    std::vector<int> iters;
    TESSEL_STEP(FuseStep, "fuse")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.leaves("iters", s.iters, s.stage);
    }
};
/// Permutes the leaves: order[i] is the old position of the new i-th leaf. (Schedule::reorder
/// also takes some of the leaves, which keep their slots; the step records the whole order.)
struct ReorderStep {
    int stage = 0;
    std::vector<int> order;
    TESSEL_STEP(ReorderStep, "reorder")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.leaf_order("order", s.order, s.stage);
    }
};
/// Sets a leaf's annotation (vectorize, unroll, parallel) or binds it to a GPU thread axis
/// (vthread, blockIdx.x/y/z, threadIdx.x/y/z: Schedule::bind).
struct AnnotateStep {
    int stage = 0, iter = 0;
    IterAnnotation annotation = IterAnnotation::None;
    TESSEL_STEP(AnnotateStep, "annotate")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.leaf("iter", s.iter, s.stage);
        v.choice("annotation", s.annotation);
    }
};
/// A stage pragma; today only "auto_unroll_max_step".
struct PragmaStep {
    int stage = 0;
    std::string key;
    int64_t value = 0;
    TESSEL_STEP(PragmaStep, "pragma")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.text("key", s.key);
        v.number("value", s.value);
    }
};
/// Computes `stage` inside stage `target`'s leaf `target_iter`.
struct ComputeAtStep {
    int stage = 0, target = 0, target_iter = 0;
    TESSEL_STEP(ComputeAtStep, "compute_at")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.stage("target", s.target);
        v.leaf("target_iter", s.target_iter, s.target);
    }
};
/// Computes `stage`, a consumer of `target`, inside the target's leaf `target_iter`, after the
/// target's body there (TVM's reverse_compute_at).
struct ReverseComputeAtStep {
    int stage = 0, target = 0, target_iter = 0;
    TESSEL_STEP(ReverseComputeAtStep, "reverse_compute_at")
    /// For the Python method's docstring.
    static constexpr const char* summary =
        "s[C].reverse_compute_at(s[P], loop): computes consumer C inside producer P's loop, "
        "after P's body there: C's region is what reads the points that one iteration of the "
        "loop wrote (each of C's axes reads one of P's at its own index; P's other axes are "
        "summed whole on the way, as split-K's parts). Where several blocks write those summed "
        "points, the last block to finish a tile computes C's points for it. P must be computed "
        "at the root. docs/schedule.md, 'reverse_compute_at'.";
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.stage("target", s.target);
        v.leaf("target_iter", s.target_iter, s.target);
    }
};
/// Substitutes the stage into its consumers.
struct ComputeInlineStep {
    int stage = 0;
    TESSEL_STEP(ComputeInlineStep, "compute_inline")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
    }
};
/// Computes the stage in its own loop nest at the top level.
struct ComputeRootStep {
    int stage = 0;
    TESSEL_STEP(ComputeRootStep, "compute_root")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
    }
};
/// Computes the stage once, outside the kernel: a global cache_read of a constant placeholder
/// becomes the separate `pre_transform` function (weight -> the stage's storage layout) and the
/// kernel reads the laid-out buffer as its argument in the weight's place.
struct PreTransformStep {
    int stage = 0;
    TESSEL_STEP(PreTransformStep, "pre_transform")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
    }
};
/// Places the stage's buffer in `scope` (global, shared or local memory).
struct SetScopeStep {
    int stage = 0;
    StorageScope scope{};
    TESSEL_STEP(SetScopeStep, "set_scope")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.choice("scope", s.scope);
    }
};
/// Inserts a stage right after `stage` (at index stage + 1) that copies stage's outputs into
/// storage `scope` ("global", "shared" or "local"); the stages `readers` (indices before the
/// insertion) read the copy instead. Later stages shift up by one.
struct CacheReadStep {
    int stage = 0;
    std::string scope;
    std::vector<int> readers;
    TESSEL_STEP(CacheReadStep, "cache_read")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.text("scope", s.scope);
        v.stages("readers", s.readers);
    }
};
/// Inserts a stage at index `stage` that computes the stage's body into storage `scope`; the
/// original stage (now stage + 1) copies from it. Later stages shift up by one.
struct CacheWriteStep {
    int stage = 0;
    std::string scope;
    TESSEL_STEP(CacheWriteStep, "cache_write")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.text("scope", s.scope);
    }
};
/// Storage layout: splits storage dimension `dim` of the stage's buffer into (outer, inner) with
/// inner extent `factor` (blocking, as packing B of a GEMM into column panels).
struct StorageSplitStep {
    int stage = 0, dim = 0;
    int64_t factor = 0;
    TESSEL_STEP(StorageSplitStep, "storage_split")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.dim("dim", s.dim, s.stage);
        v.number("factor", s.factor);
    }
};
/// Storage layout: permutes the storage dimensions; order[i] is the old position of the new i-th.
struct StorageReorderStep {
    int stage = 0;
    std::vector<int> order;
    TESSEL_STEP(StorageReorderStep, "storage_reorder")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.dim_order("order", s.order, s.stage);
    }
};
/// Storage layout: pads storage dimension `dim`'s stride so that stride % factor == offset.
struct StorageAlignStep {
    int stage = 0, dim = 0;
    int64_t factor = 0, offset = 0;
    TESSEL_STEP(StorageAlignStep, "storage_align")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.dim("dim", s.dim, s.stage);
        v.number("factor", s.factor);
        v.number("offset", s.offset);
    }
};
/// Storage layout: XOR-swizzles the 16-byte chunks of the shared buffer's rows with the row's
/// phase, 2^bits phases (Schedule::storage_swizzle).
struct StorageSwizzleStep {
    int stage = 0;
    int64_t bits = 3;
    TESSEL_STEP(StorageSwizzleStep, "storage_swizzle")
    /// For the Python method's docstring.
    static constexpr const char* summary =
        "s[T].storage_swizzle(bits=3): lays shared stage T's buffer out without bank conflicts "
        "and without padding: in each row (the last storage dimension) the 16-byte chunk c is "
        "stored at chunk c ^ phase, phase = (row / per) % 2^bits, where per = max(1, 2^bits * 16 "
        "/ row bytes) rows share a phase (CUTLASS/Triton swizzle). The 8 rows an ldmatrix reads "
        "and a warp's 16-byte stores or cp.async copies then hit all 32 banks (bits=3). Rows must "
        "be a multiple of 16 bytes and at least 32; not with storage_align on the same stage. "
        "docs/schedule.md, 'storage_swizzle'.";
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.number("bits", s.bits, int64_t(3));
    }
};
/// Splits leaf `iter` by the factor of split step `src_step` (an index into the schedule's step
/// list, which must be a SplitStep recorded earlier): the split follows that step when a searcher
/// mutates its factor (Ansor's FollowSplitStep).
struct FollowSplitStep {
    int stage = 0, iter = 0, src_step = 0;
    TESSEL_STEP(FollowSplitStep, "follow_split")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.leaf("iter", s.iter, s.stage);
        v.step_index("src_step", s.src_step);
    }
};
/// Splits leaf `iter` by the product of the factors of the split steps `src_steps` (indices
/// into the schedule's step list: splits by a factor, follow_splits or follow_fused_splits
/// recorded earlier), Ansor's FollowFusedSplitStep: a GPU stage that fetches a shared tile
/// cooperatively splits its fused loop by the consumer's thread count, the product of its
/// thread-level tile factors, and keeps following them when a searcher mutates those tiles.
struct FollowFusedSplitStep {
    int stage = 0, iter = 0;
    std::vector<int> src_steps;
    TESSEL_STEP(FollowFusedSplitStep, "follow_fused_split")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.leaf("iter", s.iter, s.stage);
        v.step_indices("src_steps", s.src_steps);
    }
};

/// Factors the reduction of `stage` over leaf `iter` (one part of a split reduction axis) into a
/// new stage inserted at index `stage`, whose output has the factored loop as data-parallel
/// dimension `factor_axis`; the original stage (now stage + 1) reduces over it.
struct RfactorStep {
    int stage = 0, iter = 0, factor_axis = 0;
    TESSEL_STEP(RfactorStep, "rfactor")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.leaf("iter", s.iter, s.stage);
        v.number("factor_axis", s.factor_axis, 0);
    }
};
/// Double buffering (TVM's double_buffer): the shared stage's buffer gets two copies; at the
/// serial loop the stage is computed at, the fetch for the next iteration is loaded into
/// registers before the current iteration's computation and stored into the other copy after
/// it, one barrier per iteration (docs/schedule.md).
struct DoubleBufferStep {
    int stage = 0;
    TESSEL_STEP(DoubleBufferStep, "double_buffer")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
    }
};
/// Multi-stage pipelining (TVM's software pipeline in schedule form): the shared stage's buffer
/// gets `depth` copies; at the serial loop the stage is computed at, the fetches of the next
/// depth - 1 iterations are asynchronous copies (cp.async) in flight while the current
/// iteration computes, one barrier per iteration (docs/schedule.md, docs/cuda.md).
struct PipelineStep {
    int stage = 0;
    int64_t depth = 0;
    TESSEL_STEP(PipelineStep, "pipeline")
    /// For the Python method's docstring.
    static constexpr const char* summary =
        "s[T].pipeline(depth): `depth` (>= 2) copies of shared stage T's buffer; at the serial "
        "loop T is computed at (a reduction loop of a GPU kernel), the fetches of the next "
        "depth - 1 iterations are asynchronous copies (cp.async, sm_80 and newer) in flight "
        "while an iteration computes, one barrier per iteration. Every shared stage computed at "
        "that loop must be pipelined with the same depth. Below sm_80 lowering raises "
        "ScheduleError (use double_buffer()). docs/cuda.md, 'Pipelined copies (cp.async)'.";
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.number("depth", s.depth);
    }
};

/// The pipelined shared stage's fetch as bulk tensor copies by the Tensor Memory Accelerator
/// (Hopper, sm_90): one thread issues cp.async.bulk.tensor copies of the whole tile, whose
/// arrival an mbarrier per pipeline copy announces (docs/cuda.md, "TMA").
struct TmaStep {
    int stage = 0;
    TESSEL_STEP(TmaStep, "tma")
    /// For the Python method's docstring.
    static constexpr const char* summary =
        "s[T].tma(): shared stage T (a cache_read of a kernel argument, pipelined with "
        "pipeline(depth)) is fetched by the Tensor Memory Accelerator (sm_90 and newer): one "
        "thread issues bulk tensor copies of the whole tile, an mbarrier per copy of the buffer "
        "counts its bytes in and every thread waits on it; rows past the tensor's edge read as "
        "zero. Leave T's loops as they are (no split, bind or vectorize): the copy is one "
        "instruction a box. The tile's layout may be swizzled (storage_swizzle) with rows of 32, "
        "64 or 128 bytes. docs/cuda.md, 'TMA'.";
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
    }
};

/// The tma() pipeline's copies issued by a producer warp group of their own (Hopper warp
/// specialization): the block gains a warp group that only issues the TMA copies, each waiting
/// for its copy of the tiles to be released on an mbarrier; the block's warp groups (the
/// consumers) wait for each copy to land, compute on it and release it, with no block barrier in
/// the loop; registers move from the producer to the consumers (setmaxnreg) where that gives
/// the consumers more (docs/cuda.md, "Warp specialization").
struct WarpSpecializeStep {
    int stage = 0;
    TESSEL_STEP(WarpSpecializeStep, "warp_specialize")
    /// For the Python method's docstring.
    static constexpr const char* summary =
        "s[T].warp_specialize(): the tma() pipeline of shared stage T is fed by a producer warp "
        "group of its own (sm_90a): the block gains 128 threads that only issue the TMA copies, "
        "each copy of the tiles released back to them on an mbarrier once the consumers (the "
        "block's own warp groups, along threadIdx.z, threadIdx.x * threadIdx.y = 128) have "
        "read it, with no block barrier in the loop; registers move from the producer to the "
        "consumers (setmaxnreg). Every shared stage of that pipeline must be warp-specialized. "
        "docs/cuda.md, 'Warp specialization'.";
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
    }
};

/// The global stage's copy out of the shared stage computed at one of its loops as bulk tensor
/// copies by the Tensor Memory Accelerator (Hopper, sm_90): one thread issues the stores of the
/// whole tile once the block's threads have written it (docs/cuda.md, "TMA stores").
struct TmaStoreStep {
    int stage = 0;
    TESSEL_STEP(TmaStoreStep, "tma_store")
    /// For the Python method's docstring.
    static constexpr const char* summary =
        "s[C].tma_store(): global stage C (an output), a plain copy of a shared stage computed at "
        "one of its loops (CS = s.cache_write(C, 'shared'), s[CS].compute_at(s[C], loop)), is "
        "stored by the Tensor Memory Accelerator (sm_90 and newer): once every thread has "
        "written the tile (and fenced it for the asynchronous proxy, then a barrier), one "
        "thread issues bulk tensor copies of it and waits until they have read it; elements "
        "past the tensor's edge are not stored. Leave C's loops inside that loop as they are (no "
        "split, bind or vectorize): the copy is one instruction a box. CS's layout may be "
        "swizzled (storage_swizzle) with rows of 32, 64 or 128 bytes, else dense (no "
        "storage_align). docs/cuda.md, 'TMA stores'.";
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
    }
};

/// Replaces the loop nest of `stage` from leaf `iter` inwards by the tensor intrinsic named
/// `intrin` (schedule/TensorIntrin.h), TVM's tensorize: the leaves from `iter` on must match the
/// intrinsic's axes (extents and kinds) and the stage's body its compute pattern.
struct TensorizeStep {
    int stage = 0, iter = 0;
    std::string intrin;
    TESSEL_STEP(TensorizeStep, "tensorize")
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.leaf("iter", s.iter, s.stage);
        v.text("intrin", s.intrin);
    }
};
/// Rebuilds the reduction `stage` over groups of its loops, each group fused into one axis:
/// `order` lists every loop of the (fresh) stage, `groups` how many of them, in that order, make
/// each group, the data-parallel groups first. Inserts before the stage a gather per read of the
/// body (indexed by the groups its indices use) and the stage over the groups; the stage itself
/// becomes a copy out of it. A convolution so becomes a matrix product over output pixels,
/// channels and the window (implicit GEMM).
struct ReindexStep {
    int stage = 0;
    std::vector<int> order;
    std::vector<int> groups;
    TESSEL_STEP(ReindexStep, "reindex")
    /// For the Python method's docstring.
    static constexpr const char* summary =
        "s[C].reindex(order, groups): rebuilds reduction C over groups of its loops, each group "
        "one fused axis (a convolution as a matrix product: output pixels, output channels, and "
        "the input channels with the window). `order` lists all of C's loops (C.op.axis and "
        "C.op.reduce_axis), `groups` how many consecutive ones of it form each group, "
        "data-parallel groups first. Inserts a gather stage per tensor read (indexed by the "
        "groups it uses: im2col for a convolution's input) and the stage over the groups, which "
        "it returns; C copies out of it. Call it before C's loops are transformed. "
        "docs/schedule.md, 'reindex'.";
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        v.stage("stage", s.stage);
        v.leaf_order("order", s.order, s.stage);
        v.numbers("groups", s.groups);
    }
};
#undef TESSEL_STEP

/// One recorded schedule step.
using Step =
    std::variant<SplitStep, FuseStep, ReorderStep, AnnotateStep, PragmaStep, ComputeAtStep,
                 ComputeInlineStep, ComputeRootStep, SetScopeStep, CacheReadStep, CacheWriteStep,
                 StorageSplitStep, StorageReorderStep, StorageAlignStep, FollowSplitStep,
                 RfactorStep, FollowFusedSplitStep, DoubleBufferStep, PipelineStep, TensorizeStep,
                 StorageSwizzleStep, PreTransformStep, TmaStep, ReindexStep, WarpSpecializeStep,
                 TmaStoreStep, ReverseComputeAtStep>;

/// The step's kind as written in JSON and as the Python method that applies it: "split",
/// "fuse", "reorder", "annotate", "pragma", "compute_at", "compute_inline", "compute_root",
/// "set_scope", "cache_read", "cache_write", "storage_split", "storage_reorder",
/// "storage_align", "follow_split", "rfactor", "follow_fused_split", "double_buffer",
/// "pipeline", "tensorize", "storage_swizzle", "pre_transform", "tma", "reindex",
/// "warp_specialize", "tma_store", "reverse_compute_at" (the struct's `kind`).
const char* step_kind_name(const Step& step);

/// Calls `f(StepType{})` for the step kind named `kind` (a default-constructed step of that
/// type); returns false when no kind has that name.
template <typename F, size_t I = 0>
bool with_step_kind(const std::string& kind, F&& f) {
    if constexpr (I == std::variant_size_v<Step>) {
        return false;
    } else {
        using T = std::variant_alternative_t<I, Step>;
        if (kind == T::kind) {
            f(T{});
            return true;
        }
        return with_step_kind<F, I + 1>(kind, std::forward<F>(f));
    }
}

/// Calls `f(StepType{})` for every step kind, in the variant's order.
template <typename F>
void for_each_step_kind(F&& f) {
    [&]<size_t... I>(std::index_sequence<I...>) {
        (f(std::variant_alternative_t<I, Step>{}), ...);
    }
    (std::make_index_sequence<std::variant_size_v<Step>>{});
}

namespace internal {
// Lists field names (step_field_names).
struct StepFieldNames {
    std::vector<std::string> names;
    void add(const char* n) { names.emplace_back(n); }
    void stage(const char* n, int) { add(n); }
    void stages(const char* n, const std::vector<int>&) { add(n); }
    void leaf(const char* n, int, int) { add(n); }
    void leaves(const char* n, const std::vector<int>&, int) { add(n); }
    void leaf_order(const char* n, const std::vector<int>&, int) { add(n); }
    void dim(const char* n, int, int) { add(n); }
    void dim_order(const char* n, const std::vector<int>&, int) { add(n); }
    void number(const char* n, int64_t, int64_t = 0) { add(n); }
    void text(const char* n, const std::string&) { add(n); }
    template <typename E>
    void choice(const char* n, E, E = E{}) {
        add(n);
    }
    void step_index(const char* n, int) { add(n); }
    void step_indices(const char* n, const std::vector<int>&) { add(n); }
    void numbers(const char* n, const std::vector<int>&) { add(n); }
    void split_factor(const char* f, const char* p, int64_t, bool) {
        add(f);
        add(p);
    }
};
}  // namespace internal

/// The names of step kind T's fields, in order: the JSON keys (with "kind") and the Python
/// methods' parameter names. A split's factor lists two names, "factor" and "nparts".
template <typename T>
std::vector<std::string> step_field_names() {
    internal::StepFieldNames names;
    const T step{};
    T::fields(step, names);
    return names.names;
}

/// The version of the step and schedule JSON format this tessel writes (and the newest it reads).
/// Version 1 is the first versioned one; JSON without a version is read as version 1.
constexpr int kScheduleFormatVersion = 1;

/// A JSON array of steps, one object per step (see docs/schedule.md for the format).
std::string steps_to_json(const std::vector<Step>& steps);
/// Parses steps_to_json's output; throws ScheduleError on malformed input, naming the step.
std::vector<Step> steps_from_json(const std::string& json);

}  // namespace tessel
