// Ansor's evolutionary search (OSDI 2020, section 5.1): the step of a tuning round that proposes
// what to measure next, ranked by the cost model.
//
//   SearchSpace space(task, {.lower = false});   // features lower each candidate once
//   CostModel model;                             // trained on the measured records
//   EvolutionStats stats;
//   std::vector<ScoredState> best =
//       evolutionary_search(space, model, measured_best, measured_keys, 64, seed, {}, &stats);
//
// The search keeps a population (2048 states by default):
//  1. The initial population is the best measured states given as `seeds` (at most
//     `measured_share` of it) and random samples of the space (SearchSpace::sample) for the rest.
//  2. Every member is scored: its features are extracted (auto_schedule/features/Features.h; this
//  lowers
//     it, and a state that does not lower is dropped), and the cost model predicts its score.
//     Duplicates (the same step list) are dropped.
//  3. The best-scored states not in `skip` (the states measured already) are kept across
//     generations.
//  4. A new population is bred from the scored one, `generations` times: each child is, with
//     probability `mutation_prob`, a mutation of one parent (SearchSpace::mutate), otherwise a
//     crossover of two parents of one sketch (SearchSpace::crossover; a mutation of the first
//     when the two cannot cross). Parents are drawn with probability proportional to their
//     score (negative scores count as zero). Then back to step 2.
// The `n` best-scored states kept are returned, best first.
//
// Breeding and scoring run on `num_threads` threads. The search is deterministic for a seed: each
// child (and each initial sample) draws from a generator of its own, made from (seed, generation,
// index), so the thread count does not change the result; the model's predictions are
// deterministic for its own thread count (CostModel.h).
//
// With a SearchSpace that checks candidates by lowering them (SearchSpaceOptions::lower, the
// default), every candidate is lowered twice: once by the space's check and once for its features.
// The tuner's space turns the check's lowering off; lowering for the features rejects the same
// states (ScheduleError or CompileError), and they are dropped.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "tessel/auto_schedule/cost_model/CostModel.h"
#include "tessel/auto_schedule/space/SearchSpace.h"

namespace tessel {

/// Options of the evolutionary search (Ansor's values by default).
struct EvolutionOptions {
    int population = 2048;        ///< states per generation
    int generations = 4;          ///< breeding rounds after the initial population
    double mutation_prob = 0.85;  ///< chance that a child is a mutation (else a crossover)
    /// The most of the initial population taken from `seeds` (the best measured states).
    double measured_share = 0.2;
    /// Threads breeding and scoring (0: the machine's cores, TESSEL_NUM_THREADS if set).
    int num_threads = 0;
};

/// Where an evolutionary search's time went, and what it made.
struct EvolutionStats {
    double sample_seconds = 0;        ///< sampling the initial population (wall)
    double breed_seconds = 0;         ///< making children and extracting features (wall)
    double mutate_cpu_seconds = 0;    ///< of which: mutation and crossover (thread CPU time)
    double features_cpu_seconds = 0;  ///< of which: lowering and feature extraction (CPU)
    double predict_seconds = 0;       ///< the cost model's predictions (wall)
    double total_seconds = 0;         ///< the whole search (wall)
    int64_t scored = 0;               ///< states whose features were extracted and scored
    int64_t children = 0;             ///< children made by mutation or crossover
    int64_t failed_children = 0;      ///< children no operator could make (illegal in every try)
    int64_t rejected = 0;             ///< states that did not lower (no features)
    int64_t duplicates = 0;           ///< states dropped as a copy of another in their population
};

/// A state and its predicted score (higher is faster).
struct ScoredState {
    SearchState state;
    double score = 0;
};

/// The canonical key of a state: its schedule's JSON (Schedule::to_json), the same for the same
/// step list in any process. The search and the tuner skip states whose key they have seen.
std::string state_key(const Schedule& schedule);

/// Runs the search (see the file comment) and returns at most `n` distinct states, best-scored
/// first, none of whose keys is in `skip`. `seeds` may come from a log (their sketch is matched
/// when it is -1). RuntimeError for options out of range.
std::vector<ScoredState> evolutionary_search(const SearchSpace& space, const CostModel& model,
                                             const std::vector<SearchState>& seeds,
                                             const std::unordered_set<std::string>& skip, int n,
                                             uint64_t seed, const EvolutionOptions& options = {},
                                             EvolutionStats* stats = nullptr);

}  // namespace tessel
