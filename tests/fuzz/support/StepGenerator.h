// The schedule fuzzer's random step generator: applies random primitives with random (mostly
// plausible, sometimes illegal) arguments to a schedule, as Ansor's searcher does, and counts how
// many each primitive applied and rejected. A rejection is a ScheduleError; it must leave the
// schedule exactly as it was (checked). Anything else a primitive throws propagates. Every step
// kind is drawn: loop primitives, compute locations, cache_read / cache_write into every scope,
// storage_split / storage_reorder / storage_align, follow_split of an earlier split, and rfactor
// (mostly of a split reduction part, or a split of a root reduction axis followed by rfactor).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>

#include "tessel/schedule/Schedule.h"

namespace tessel::fuzz {

/// Counts over many generated primitives.
struct StepStats {
    std::map<std::string, int64_t> applied, rejected;  ///< per primitive name
    int64_t splits = 0;        ///< applied splits (tile's included) of a constant extent
    int64_t non_dividing = 0;  ///< ... whose factor (or nparts) does not divide the extent
    std::map<std::string, int64_t> tails;  ///< applied splits per tail strategy

    void merge(const StepStats& other);
    int64_t total_applied() const;
    int64_t total_rejected() const;
    /// A table: one line per primitive (applied, rejected, rejection %), then the totals, the
    /// share of non-dividing split factors and the tail strategies.
    std::string report() const;
};

/// Which primitives are drawn how often.
enum class StepMix {
    Cpu,  ///< every primitive (the schedule fuzzer)
    Gpu,  ///< no CPU-parallel loops; more caches, compute_at, cross-thread reductions and rfactor
          ///< (the GPU schedule fuzzer, which binds the kernels' loops itself afterwards)
};

/// Applies random primitives to schedules (see the file comment).
class StepGenerator {
public:
    StepGenerator(uint64_t seed, StepStats* stats, StepMix mix = StepMix::Cpu)
        : rng_(seed), stats_(stats), mix_(mix) {}

    /// Attempts `count` random primitives on `s`. Throws FuzzCheckFailed when a rejected
    /// primitive changed the schedule; whatever else a primitive throws (other than
    /// ScheduleError) propagates.
    void apply_random(Schedule& s, int count);
    /// The last primitive attempted, as a call: "split(2, 1, 5, shift_inwards)".
    const std::string& last_attempt() const { return last_; }

    /// A uniform integer in [0, n).
    int pick(int n);

private:
    struct Attempt;
    static Attempt simple(std::string kind, std::string call, std::function<void(Schedule&)> apply);
    Attempt random_attempt(const Schedule& s);
    Attempt split_attempt(const Schedule& s, int stage, bool nparts);
    Attempt tile_attempt(const Schedule& s, int stage);
    Attempt fuse_attempt(const Schedule& s, int stage);
    Attempt reorder_attempt(const Schedule& s, int stage);
    Attempt annotate_attempt(const Schedule& s, int stage, IterAnnotation a);
    Attempt compute_at_attempt(const Schedule& s, int stage);
    Attempt bind_attempt(const Schedule& s, int stage);
    Attempt cross_thread_attempt(const Schedule& s, int stage);
    Attempt set_scope_attempt(int stage);
    Attempt cache_read_attempt(const Schedule& s);
    Attempt cache_write_attempt(const Schedule& s, int stage);
    Attempt storage_attempt(const Schedule& s, int stage);
    Attempt follow_split_attempt(const Schedule& s, int stage);
    Attempt rfactor_attempt(const Schedule& s, int stage);
    std::string random_scope();
    int random_stage(const Schedule& s);
    int random_leaf(const Schedule& s, int stage);
    int64_t random_factor(const Schedule& s, int stage, int leaf);
    TailStrategy random_tail();

    std::mt19937_64 rng_;
    StepStats* stats_;
    StepMix mix_;
    std::string last_;
};

}  // namespace tessel::fuzz
