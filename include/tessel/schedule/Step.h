// Steps: the schedule as data.
//
// Every schedule primitive appends one Step (tile appends two splits and a reorder). Steps
// address stages by index and iterators by their position in the stage's leaf list at the time
// the step is applied, as Ansor's do, so a step list replays deterministically on a fresh
// schedule of the same DAG, serialises to JSON, and can be mutated by the auto-scheduler.
//
// Adding a primitive touches: its struct and the Step variant here; Schedule::apply and the
// primitive in src/schedule/Schedule*.cpp; the JSON reader/writer in src/schedule/StepJson.cpp;
// the Python printer in src/schedule/ToPython.cpp; and a test in
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

/// One recorded schedule step.
using Step = std::variant<SplitStep, FuseStep, ReorderStep, AnnotateStep, PragmaStep, ComputeAtStep,
                          ComputeInlineStep, ComputeRootStep, SetScopeStep>;

/// The step's kind as written in JSON: "split", "fuse", "reorder", "annotate", "pragma",
/// "compute_at", "compute_inline", "compute_root", "set_scope".
const char* step_kind_name(const Step& step);

/// A JSON array of steps, one object per step (see docs/schedule.md for the format).
std::string steps_to_json(const std::vector<Step>& steps);
/// Parses steps_to_json's output; throws ScheduleError on malformed input, naming the step.
std::vector<Step> steps_from_json(const std::string& json);

}  // namespace tessel
