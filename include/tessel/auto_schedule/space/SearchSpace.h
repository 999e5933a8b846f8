// The search space: complete schedules sampled from a task's sketches, mutated and crossed over
// (Ansor, OSDI 2020, sections 4.2 and 5.1).
//
//   SearchSpace space(task);                          // generate_sketches(task) once
//   SampleResult r = space.sample(1000, /*seed=*/7);   // on all cores; r.states, r.rejected
//   std::mt19937_64 rng(1);
//   std::optional<SearchState> m = space.mutate(r.states[0], rng);
//   std::optional<SearchState> c = space.crossover(r.states[0], r.states[1], rng);
//   std::cout << m->schedule.to_python();             // a runnable scheduling script
//
// A state is a complete Schedule: its sketch's steps (with the open split lengths filled in)
// followed by the steps random annotation appended. Annotation is uniform over the legal
// choices: tile sizes (factorisations of each tiled extent, the innermost at most 64), compute
// locations of stages no rule tiled (CPU), parallel loops (outer spatial loops fused until the
// parallelism passes cores x 16), the auto-unroll pragma of tiled stages (0/16/64/512, and 1024
// on GPUs), vectorisation (CPU: inner spatial loops fused up to 16 lanes) and GPU thread
// bindings (tile levels to blockIdx.x, vthread (a loop per axis) and threadIdx.x; shared-memory
// fetches fused, split by the consumer's thread count through follow_fused_split, bound and
// vectorised; with register read caches, each shared tile's layout, kept, transposed or padded, and
// the copies' vector lanes). docs/auto_schedule.md describes each.
//
// Every candidate is checked as the tuner would build it: verify_schedule for the target, then
// lowering to the feature point (LowerOptions::stop_after = "partition_loops"). A candidate a
// primitive, verify_schedule or lowering refuses (ScheduleError, CompileError) is rejected and
// counted under its reason; anything else (an InternalError) propagates: it is a bug.
//
// Sampling is deterministic: sample i depends only on (seed, i), whatever the thread count.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "tessel/auto_schedule/space/Sketch.h"
#include "tessel/lower/LoweredFunc.h"

namespace tessel {

/// A complete schedule of the search space.
struct SearchState {
    Schedule schedule;
    /// The sketch it was annotated from (an index into SearchSpace::sketches()).
    int sketch = -1;
    /// How it was made: "random", "mutate_tile_size", "mutate_auto_unroll",
    /// "mutate_row_threads", "mutate_pipelining", "mutate_shared_layout",
    /// "mutate_fetch_lanes", "mutate_compute_location", "mutate_parallel",
    /// "crossover".
    std::string origin;
    /// The number of its steps that are its sketch's (the rest are annotation).
    int sketch_steps = 0;
    /// For each annotation step, the annotation rule that made it (an index into the target's
    /// rule list; crossover merges the parents' steps rule by rule). Empty when unknown.
    std::vector<int> step_rules;
};

/// What sample() made: the states (fewer than asked when some were rejected every time) and the
/// rejections by reason ("verify_schedule: ...", "annotate: ...", "lower: ...").
struct SampleResult {
    std::vector<SearchState> states;
    std::map<std::string, int64_t> rejected;
    int64_t attempts = 0;
    /// rejected / attempts.
    double rejection_rate() const;
};

/// Options of the search space.
struct SearchSpaceOptions {
    SketchOptions sketch;
    /// Check each candidate by lowering it to the feature point (see the file comment).
    bool lower = true;
    /// Attempts per sample (each with its own random choices) before the sample is given up.
    int attempts = 4;
    /// Threads sample() uses (0: the machine's cores, TESSEL_NUM_THREADS if set).
    int num_threads = 0;
};

/// A task's search space: its sketches and the operations on states.
class SearchSpace {
public:
    /// Generates the task's sketches (generate_sketches). ScheduleError when there is none.
    explicit SearchSpace(SearchTask task, SearchSpaceOptions options = {});
    SearchSpace(const SearchSpace&) = delete;  // the rules' context refers to the task
    SearchSpace& operator=(const SearchSpace&) = delete;

    const SearchTask& task() const { return task_; }
    const std::vector<Sketch>& sketches() const { return sketches_; }
    const SearchSpaceOptions& options() const { return options_; }

    /// `n` random states (see the file comment); sample i uses only (seed, i).
    SampleResult sample(int n, uint64_t seed) const;

    /// One random annotation of sketch `sketch` with `rng`: the state, or nullopt when a
    /// primitive, verify_schedule or lowering refused it (`reason` says why).
    std::optional<SearchState> annotate(int sketch, std::mt19937_64& rng,
                                        std::string* reason = nullptr) const;
    /// The same with the tile lengths given instead of drawn: one list per entry of the sketch's
    /// `tiles`, outer level first, each one of factorizations() of its tile. The other choices
    /// are drawn with `rng`: the states are those annotate() makes when it draws these tiles
    /// (how a test shows a schedule is in the space, or a searcher starts from known tiles).
    /// ScheduleError when the lists do not fit the sketch's tiles.
    std::optional<SearchState> annotate(int sketch,
                                        const std::vector<std::vector<int64_t>>& tile_lengths,
                                        std::mt19937_64& rng, std::string* reason = nullptr) const;

    /// A mutation of `state` (tile size 0.90, auto-unroll 0.04, compute location 0.05, parallel
    /// 0.01 on CPUs; tile size 0.90, auto-unroll 0.10, row threads 0.90, pipelining 0.10, shared
    /// layout 0.10, fetch lanes 0.10 on GPUs; among those that apply, the weights renormalised),
    /// checked as a sample is; nullopt when none applies (mutations() is empty) or no legal
    /// mutation was found in a few tries.
    std::optional<SearchState> mutate(const SearchState& state, std::mt19937_64& rng) const;

    /// The names of the mutations that apply to `state` ("mutate_tile_size" where a tiled loop
    /// is longer than 1, "mutate_auto_unroll" where a pragma is, "mutate_row_threads" where a
    /// GPU row group's threads were drawn (the thread count of all its stages),
    /// "mutate_pipelining" where a GPU state has shared fetches, "mutate_shared_layout" where it
    /// has register read caches (the layout of one shared tile and its copy's vector lanes,
    /// drawn together), "mutate_fetch_lanes" where a GPU state has cooperative fetches (the
    /// vector lanes of one), and
    /// "mutate_compute_location" and "mutate_parallel" where annotation placed a stage or a
    /// parallel loop); empty for a state of no sketch.
    std::vector<std::string> mutations(const SearchState& state) const;

    /// A child taking each stage's choices (its tile sizes and annotation steps) from one of two
    /// states of the same sketch, the dependencies between stages repaired (a compute_at whose
    /// loop the other parent's stage no longer has is moved to its nearest loop); nullopt when
    /// the parents come from different sketches or the child is illegal.
    std::optional<SearchState> crossover(const SearchState& a, const SearchState& b,
                                         std::mt19937_64& rng) const;

    /// Checks `schedule` as sample() checks a candidate; returns "" or the rejection reason.
    std::string check(const Schedule& schedule) const;

    /// The sketch whose steps `schedule` starts with (split factors aside), or -1: lets a state
    /// read back from a tuning log be mutated.
    int match_sketch(const Schedule& schedule) const;

    /// The factorisations annotation picks from for a tile group: every way to write
    /// `g.extent` as a product of `g.steps.size() + 1` lengths (outer level first) whose last is
    /// at most g.max_innermost.
    const std::vector<std::vector<int64_t>>& factorizations(const TileGroup& g) const;

    /// The DAG analysis the rules use.
    const SketchContext& context() const { return *context_; }

private:
    std::optional<SearchState> annotate_with(int sketch,
                                             const std::vector<std::vector<int64_t>>* tile_lengths,
                                             std::mt19937_64& rng, std::string* reason) const;
    Schedule draw_tile_sizes(const Sketch& sketch, std::vector<Step>& steps, std::mt19937_64& rng,
                             std::vector<std::vector<Expr>>& extents) const;

    SearchTask task_;
    SearchSpaceOptions options_;
    std::shared_ptr<const DAGAnalysis> dag_;
    std::shared_ptr<const SketchContext> context_;
    std::vector<Sketch> sketches_;
    std::map<std::tuple<int64_t, int, int64_t>, std::vector<std::vector<int64_t>>> factors_;
};

/// `n` random states of `task`'s search space with default options.
SampleResult sample(const SearchTask& task, int n, uint64_t seed);

/// The random generator of sample i of a seed (what sample() uses for it).
std::mt19937_64 sample_rng(uint64_t seed, int64_t i, int attempt = 0);

}  // namespace tessel
