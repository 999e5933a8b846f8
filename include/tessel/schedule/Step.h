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
// Adding a primitive touches: its struct and the Step variant here; Schedule::apply and the
// primitive in src/schedule/*Primitives.cpp (or RFactor.cpp); the JSON reader/writer in
// src/schedule/StepJson.cpp; the Python printer in src/schedule/ToPython.cpp; and a test in
// tests/unit/schedule_steps_test.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace tessel {

enum class StorageScope : uint8_t;  // ir/IR.h

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

/// What a split does when the factor does not divide the extent.
enum class TailStrategy : uint8_t {
    Guard,         ///< a `likely(...)` guard skips the points past the end (default)
    ShiftInwards,  ///< the last outer iteration shifts back and recomputes points (pure stages)
    RoundUp,       ///< computes past the end into padded storage (intermediate stages only)
};
const char* tail_strategy_name(TailStrategy t);

/// Splits leaf `iter` by `factor` (inner extent), or into `factor` outer parts when by_nparts.
struct SplitStep {
    int stage, iter;
    int64_t factor;
    bool by_nparts = false;
    TailStrategy tail = TailStrategy::Guard;
    bool operator==(const SplitStep&) const = default;
};
/// Fuses adjacent leaves `iters` (consecutive positions, outermost first) into one.
struct FuseStep {
    int stage;
    std::vector<int> iters;
    bool operator==(const FuseStep&) const = default;
};
/// Permutes the leaves: order[i] is the old position of the new i-th leaf.
struct ReorderStep {
    int stage;
    std::vector<int> order;
    bool operator==(const ReorderStep&) const = default;
};
/// Sets a leaf's annotation (vectorize, unroll, parallel) or binds it to a GPU thread axis
/// (vthread, blockIdx.x/y/z, threadIdx.x/y/z: Schedule::bind).
struct AnnotateStep {
    int stage, iter;
    IterAnnotation annotation;
    bool operator==(const AnnotateStep&) const = default;
};
/// A stage pragma; today only "auto_unroll_max_step".
struct PragmaStep {
    int stage;
    std::string key;
    int64_t value;
    bool operator==(const PragmaStep&) const = default;
};
/// Computes `stage` inside stage `target`'s leaf `target_iter`.
struct ComputeAtStep {
    int stage, target, target_iter;
    bool operator==(const ComputeAtStep&) const = default;
};
struct ComputeInlineStep {
    int stage;
    bool operator==(const ComputeInlineStep&) const = default;
};
struct ComputeRootStep {
    int stage;
    bool operator==(const ComputeRootStep&) const = default;
};
/// Places the stage's buffer in `scope` (global, shared or local memory).
struct SetScopeStep {
    int stage;
    StorageScope scope;
    bool operator==(const SetScopeStep&) const = default;
};
/// Inserts a stage right after `stage` (at index stage + 1) that copies stage's outputs into
/// storage `scope` ("global", "shared" or "local"); the stages `readers` (indices before the
/// insertion) read the copy instead. Later stages shift up by one.
struct CacheReadStep {
    int stage;
    std::string scope;
    std::vector<int> readers;
    bool operator==(const CacheReadStep&) const = default;
};
/// Inserts a stage at index `stage` that computes the stage's body into storage `scope`; the
/// original stage (now stage + 1) copies from it. Later stages shift up by one.
struct CacheWriteStep {
    int stage;
    std::string scope;
    bool operator==(const CacheWriteStep&) const = default;
};
/// Storage layout: splits storage dimension `dim` of the stage's buffer into (outer, inner) with
/// inner extent `factor` (blocking, as packing B of a GEMM into column panels).
struct StorageSplitStep {
    int stage, dim;
    int64_t factor;
    bool operator==(const StorageSplitStep&) const = default;
};
/// Storage layout: permutes the storage dimensions; order[i] is the old position of the new i-th.
struct StorageReorderStep {
    int stage;
    std::vector<int> order;
    bool operator==(const StorageReorderStep&) const = default;
};
/// Storage layout: pads storage dimension `dim`'s stride so that stride % factor == offset.
struct StorageAlignStep {
    int stage, dim;
    int64_t factor, offset;
    bool operator==(const StorageAlignStep&) const = default;
};
/// Splits leaf `iter` by the factor of split step `src_step` (an index into the schedule's step
/// list, which must be a SplitStep recorded earlier): the split follows that step when a searcher
/// mutates its factor (Ansor's FollowSplitStep).
struct FollowSplitStep {
    int stage, iter, src_step;
    bool operator==(const FollowSplitStep&) const = default;
};
/// Factors the reduction of `stage` over leaf `iter` (one part of a split reduction axis) into a
/// new stage inserted at index `stage`, whose output has the factored loop as data-parallel
/// dimension `factor_axis`; the original stage (now stage + 1) reduces over it.
struct RfactorStep {
    int stage, iter, factor_axis;
    bool operator==(const RfactorStep&) const = default;
};

/// One recorded schedule step.
using Step = std::variant<SplitStep, FuseStep, ReorderStep, AnnotateStep, PragmaStep, ComputeAtStep,
                          ComputeInlineStep, ComputeRootStep, SetScopeStep, CacheReadStep,
                          CacheWriteStep, StorageSplitStep, StorageReorderStep, StorageAlignStep,
                          FollowSplitStep, RfactorStep>;

/// The step's kind as written in JSON: "split", "fuse", "reorder", "annotate", "pragma",
/// "compute_at", "compute_inline", "compute_root", "set_scope", "cache_read", "cache_write",
/// "storage_split", "storage_reorder", "storage_align", "follow_split", "rfactor".
const char* step_kind_name(const Step& step);

/// A JSON array of steps, one object per step (see docs/schedule.md for the format).
std::string steps_to_json(const std::vector<Step>& steps);
/// Parses steps_to_json's output; throws ScheduleError on malformed input, naming the step.
std::vector<Step> steps_from_json(const std::string& json);

}  // namespace tessel
