// The tuner: finds a fast schedule for a search task on this machine, writing every measurement
// to a tuning log from which builds later take the best (docs/tuning.md, "Tuning").
//
//   SearchTask task("op.matmul", {int64_t(512), int64_t(512), int64_t(512), int64_t(0),
//                                 int64_t(0), Float(32)}, Target("llvm -num-cores=2"));
//   TuningOptions options;
//   options.trials = 256;
//   options.log_file = "tuning_logs/matmul_512.jsonl";
//   TuningResult r = tune(task, options);
//   std::cout << r.best_gflops << " GFLOP/s\n" << r.best_schedule->to_python();
//
// A round, until `trials` measurements of the task are in the log:
//  1. search: the task's default schedule, until it is in the log (measure_default); with a
//     trained cost model, Ansor's evolutionary search (EvolutionarySearch.h)
//     proposes the best-scored unmeasured states, and an epsilon-greedy share (eps_greedy of the
//     round) is random samples; before the model has trained (CostModel::min_programs successful
//     programs), every candidate is a random sample;
//  2. measure: the Measurer builds, checks and times the round's candidates (Measure.h), one at a
//     time after the whole batch is built, with nothing else of the tuner running (but the next
//     round's search, when searching ahead on a cluster: below);
//  3. log: every measurement, failures included, is appended to the log (RecordWriter: one line
//     each, synced before the round counts);
//  4. re-measure: the fastest few states (remeasure_top) are timed again, each up to
//     remeasure_limit times in all, and logged (origin "remeasure"); a state costs the median of
//     its timings (ScheduleCosts, Record.h), so one lucky timing on a busy machine does not
//     make the best; the default schedule is timed again in the rounds after its trial, so one
//     unlucky timing does not discard it;
//  5. train: the round's programs join the cost model's training set; the model retrains from
//     scratch on every measured program of the task (of every task sharing the model, when
//     TuningOptions::shared_cost_model is set) before the next round's search;
//  6. restart (restart_after): when the epoch's best has stalled, a new epoch begins: the model
//     forgets the task's programs and the search's seeds are the new epoch's measured states.
// At the end (unless should_stop stopped it), the final check: the fastest few states
// (remeasure_top) and the default schedule are timed side by side, in turns, final_measurements
// times each, and logged (origin "check"). The search's costs are medians of timings taken
// minutes or hours apart, and its best is the state whose timings fell lowest among hundreds
// (on a machine whose speed moves, a few percent below what it runs at); the check's timings
// are taken together, and they decide: a checked state costs the median of its check's timings,
// the states it did not time rank behind (ScheduleCosts, Record.h). So a tuned best that is
// slower than the default side by side is not the log's best: the default is. TuningResult has
// the check's figures (final_seconds, default_seconds) and the search's (search_best_seconds);
// a later process may still see less than either (docs/tuning.md, "What the tuner reports").
// A trial is one distinct candidate sent to measurement, failures included; re-measurements are
// not trials. No state is a trial twice: the search skips every state whose step list
// (state_key) is in the log.
//
// Searching ahead (search_ahead; docs/tuning.md, "Searching ahead"): round N+1 is searched
// before round N's measurements are recorded, from the history and the cost model as they were
// after round N-1 (its re-measurements and training), without round N's candidates, which count
// against the trials left; then round N is logged, re-measured and trained on. The records
// depend on the option alone, not on whether anything overlaps: the search runs while round N
// measures only where the measure runner times elsewhere (MeasureRunner::times_elsewhere: a Ray
// cluster), so that a cluster's nodes do not wait for the daemon's search; on this machine round
// N is measured first and round N+1 searched after, never beside a timing.
//
// The log is the only truth (docs/design.md, decision 6). On start the tuner reads the log's
// records: they count as trials done, the model trains on them, their best states seed the
// search, none of them is measured again, and the round numbers (and with them the rounds'
// random seeds) continue after the last recorded round. So a killed tuner, started again with
// the same options, goes on where it stopped.
//
// Errors (RuntimeError, before anything is measured): options out of range, no log file, a log
// that cannot be read or opened for appending, a log holding records of another task (each task
// has its own log; the message names both tasks), a tessel built without XGBoost (no cost model).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessel/Options.h"
#include "tessel/auto_schedule/cost_model/CostModel.h"
#include "tessel/auto_schedule/measure/Measure.h"
#include "tessel/auto_schedule/measure/MeasureRunner.h"
#include "tessel/auto_schedule/records/Record.h"
#include "tessel/auto_schedule/task/SearchTask.h"
#include "tessel/auto_schedule/tuner/EvolutionarySearch.h"

namespace tessel {

/// What one round did and where its time went (seconds, wall clock).
struct TuningRound {
    int64_t round = 0;        ///< its number, as the log's records write it
    int measured = 0;         ///< candidates measured (trials)
    int errors = 0;           ///< of which failed (an error code other than none)
    int remeasured = 0;       ///< re-measurements of the fastest states and the default
    int chosen_by_model = 0;  ///< candidates the evolutionary search proposed
    int random = 0;           ///< random samples (epsilon-greedy, or before the model trained)
    bool measured_default = false;  ///< the default schedule was among them (measure_default)
    int64_t epoch = 0;          ///< the search's epoch it belongs to (TuningOptions::restart_after)
    bool restarted = false;     ///< a new epoch begins after it
    double search_seconds = 0;  ///< choosing the candidates (evolutionary search or sampling)
    double build_seconds = 0;   ///< the Measurer's build stage (re-measurements included)
    double run_seconds = 0;     ///< the rest of measuring: workers, check runs, timing
    double train_seconds = 0;   ///< retraining the cost model (before this round's search)
    double total_seconds = 0;
    EvolutionStats search;   ///< the evolutionary search's figures (zeros in a random round)
    RankingQuality quality;  ///< how the model ranked this round's candidates, before training
    double best_seconds = std::numeric_limits<double>::infinity();  ///< the task's best, after
};

/// Where the tuning stands, as given to TuningOptions::on_progress after every round.
struct TuningProgress {
    std::string task;          ///< the task's workload name, or its DAG hash
    int64_t trials = 0;        ///< trials of the task in the log (resumed ones included)
    int64_t trials_total = 0;  ///< TuningOptions::trials
    int64_t resumed_trials = 0;
    double best_seconds = std::numeric_limits<double>::infinity();
    double best_gflops = 0;      ///< the best schedule's throughput (0 before any success)
    double elapsed_seconds = 0;  ///< since tune() started
    /// Remaining trials × this run's seconds per trial; NaN before the first round.
    double eta_seconds = std::numeric_limits<double>::quiet_NaN();
    std::optional<TuningRound> last_round;  ///< the round just finished (none at the start)
};

/// The one-line report of `p`: trials done of the total, the best GFLOP/s and time, the last
/// round's time split (search / build / run / train), elapsed time and ETA.
std::string format_progress(const TuningProgress& p);

/// A duration as the progress line shows it: "42s", "3m05s", "2h10m" ("?" when not finite).
std::string format_duration(double seconds);

/// Options of tune(). The defaults are Ansor's.
struct TuningOptions {
    /// Trials in all: measurements of the task in the log, the resumed ones included.
    int64_t trials = 1000;
    int measurements_per_round = 64;  ///< candidates measured per round
    /// The JSON-lines tuning log (Record.h): read on start (resume), appended to every round.
    /// Required.
    std::string log_file;
    uint64_t seed = 0;      ///< the search's seed (each round's seed derives from it and the round)
    int population = 2048;  ///< evolutionary search: states per generation
    int generations = 4;    ///< evolutionary search: breeding rounds
    double mutation_prob = 0.85;  ///< a child is a mutation with this chance, else a crossover
    double eps_greedy = 0.05;     ///< share of a round's candidates sampled at random
    /// After each round, re-measure the fastest this many states (0: never), and the default
    /// schedule (measure_default) in the rounds after its trial wherever it stands ...
    int remeasure_top = 3;
    /// ... until each has this many measurements (its trial included; at least 1).
    int remeasure_limit = 3;
    /// The first round measures the task's rule-based default schedule (op::default_schedule_rules,
    /// origin "default") beside its other candidates, so that the log's best is never slower
    /// than not tuning; a schedule the rules cannot make for the task is left out.
    bool measure_default = true;
    /// Stop once this many trials in a row have not improved the best time (0: never).
    int64_t early_stopping = 0;
    /// Restart the search once this many trials in a row have not improved the current epoch's
    /// best time by 1 % (0: never). A new epoch searches as a fresh tuning would: its model
    /// trains on the epoch's programs alone (and other tasks' in a shared model), its seeds are
    /// the epoch's measured states, its first rounds are random again; the log's best, the
    /// measured states' keys and the trial count stay the tuning's. A run that settles in one
    /// basin of a rugged space (CUDA GEMMs: docs/tuning.md, "Restarts") gets several draws.
    /// Epochs are derived from the log, round by round: resuming gives the same epochs.
    int64_t restart_after = 0;
    /// Threads searching and training (0: the machine's cores, TESSEL_NUM_THREADS if set). None
    /// of them runs while a candidate is timed on this machine.
    int num_threads = 0;
    /// Search each round before the one before it is recorded, so that the search can run while
    /// that round measures on a cluster (see "Searching ahead" in the file comment).
    bool search_ahead = false;
    /// The final check (the file comment): the fastest states and the default schedule timed
    /// this many times each, in turns, and logged; their medians decide the log's best
    /// (TuningResult::final_seconds, default_seconds; 0: no check).
    int final_measurements = 3;
    MeasureOptions measure;  ///< how candidates are built and timed (TVM's timing defaults)
    /// Where candidates are measured (MeasureRunner.h); none: a LocalMeasureRunner of this
    /// tuning's own. Tasks tuned together share one.
    std::shared_ptr<MeasureRunner> measure_runner;
    /// The cost model's options; its seed is replaced by `seed`. Its thread count stays 1 by
    /// default: XGBoost's threads cost more than they gain on the few thousand programs of a
    /// tuning (and spin while waiting, which hurts on a loaded machine).
    CostModelOptions cost_model;
    /// The cost model of the tasks tuned together (CostModel.h, SharedCostModel; run_job gives
    /// every task of a job the job's): this tuning joins it and trains it with its task's
    /// programs too; `cost_model` and `seed` do not change it. None: a model of this tuning's
    /// own, trained on its task's programs alone.
    std::shared_ptr<SharedCostModel> shared_cost_model;
    /// 0: silent; 1: a progress line per round on stderr (refreshed in place on a terminal) and
    /// the best schedule as a Python script on stdout at the end; 2: also each round's search
    /// figures and the model's ranking quality.
    int verbose = 1;
    /// Called after every round and once at the start (without last_round); may throw to stop
    /// the tuning (what was measured stays in the log).
    std::function<void(const TuningProgress&)> on_progress;
    /// Asked before each round's search and measurement; true stops the tuning there.
    std::function<bool()> should_stop;

    /// The fields users set, described once (tessel/Options.h): Python's tune() keywords and
    /// their defaults, job files' top-level and "search" fields and tessel-tune's flags follow
    /// from it (the measurement's fields are MeasureOptions::fields). The ranges are those a job
    /// file and a flag accept; tune() checks its options itself.
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        constexpr int64_t kMaxTrials = int64_t(1) << 40;
        constexpr unsigned search = kJobSearch | kTune;
        v.integer("trials", s.trials, 0, kMaxTrials, kTune,
                  "trials in all, the ones resumed from the log included");
        v.text("log_file", s.log_file, kTune, "the JSON-lines tuning log (required)");
        v.integer("measurements_per_round", s.measurements_per_round, 1, 1 << 16, kJobTop | kTune,
                  "candidates measured per round");
        v.integer("seed", s.seed, 0, std::numeric_limits<int64_t>::max(), kJobTop | kTune,
                  "the search's seed");
        v.integer("population", s.population, 1, 1 << 20, search,
                  "evolutionary search: states per generation");
        v.integer("generations", s.generations, 0, 1000, search,
                  "evolutionary search: breeding rounds");
        v.number("mutation_prob", s.mutation_prob, 0, 1, search,
                 "a child is a mutation with this chance, else a crossover");
        v.number("eps_greedy", s.eps_greedy, 0, 1, search,
                 "share of a round's candidates sampled at random");
        v.integer("remeasure_top", s.remeasure_top, 0, 1 << 16, search,
                  "the fastest states re-measured after each round (0: never)");
        v.integer("remeasure_limit", s.remeasure_limit, 1, 1 << 16, search,
                  "measurements each re-measured state is brought to");
        v.flag("measure_default", s.measure_default, search,
               "the first round measures the task's rule-based default schedule");
        v.integer("early_stopping", s.early_stopping, 0, kMaxTrials, kTune,
                  "stop after this many trials without improving the best (0: never)");
        v.integer("restart_after", s.restart_after, 0, kMaxTrials, search,
                  "a new epoch after this many trials without improving its best by 1 % "
                  "(0: never)");
        v.integer("num_threads", s.num_threads, 0, 4096, search,
                  "threads searching and training (0: the machine's cores)");
        v.flag("search_ahead", s.search_ahead, kJobTop | kTune,
               "search each round while the one before it measures (on a cluster), from the "
               "history before that round");
        v.integer("min_programs", s.cost_model.min_programs, 1, 1 << 20, search,
                  "successful programs before the cost model trains");
        v.integer("final_measurements", s.final_measurements, 0, 1 << 16, kTune,
                  "the final check: the fastest states and the default timed side by side "
                  "this many times each, logged; they decide the best (0: no check)");
    }
};

/// One point of a tuning curve: the best time after `trial` trials (with the re-measurements
/// logged before the next trial).
struct TuningCurvePoint {
    int64_t trial = 0;  ///< trials done (1 after the first)
    double best_seconds = std::numeric_limits<double>::infinity();
    double best_gflops = 0;  ///< 0 until a trial succeeds
};

/// What tune() found.
struct TuningResult {
    /// The best schedule of the task in the log (after this run); none when no trial succeeded.
    std::optional<Schedule> best_schedule;
    /// Its cost in the log: the median of the search's timings of it (ScheduleCosts).
    double best_seconds = std::numeric_limits<double>::infinity();
    double best_gflops = 0;
    /// The best schedule's median in the final check (TuningOptions::final_measurements), which
    /// chose it. Infinity (0 GFLOP/s) when there was no check (none asked, no success, stopped)
    /// or it failed.
    double final_seconds = std::numeric_limits<double>::infinity();
    double final_gflops = 0;
    /// The default schedule's median in the final check (infinity when it was not checked: the
    /// log has no successful default trial, or no check ran).
    double default_seconds = std::numeric_limits<double>::infinity();
    /// The best schedule is the default (the check found none of the search's faster).
    bool best_is_default = false;
    /// The search's best before the final check: the median of its timings in the search (the
    /// figure the progress lines printed).
    double search_best_seconds = std::numeric_limits<double>::infinity();
    double flops = 0;                     ///< the task's floating-point operations per run
    int64_t trials = 0;                   ///< trials of the task in the log, after this run
    int64_t resumed_trials = 0;           ///< of which were in the log before it
    int64_t errors = 0;                   ///< failed trials of the task in the log
    std::vector<TuningCurvePoint> curve;  ///< one point per trial, in the log's order
    std::vector<TuningRound> rounds;      ///< this run's rounds
    /// Why the tuning stopped: "trials" (all done), "early_stopping", "exhausted" (the search
    /// found no unmeasured candidate) or "stopped" (should_stop).
    std::string stop_reason;
    double seconds = 0;  ///< this run's wall time
};

/// Tunes `task` (see the file comment).
TuningResult tune(const SearchTask& task, const TuningOptions& options);

/// The task's floating-point operations per run (a multiply-add counts 2), what GFLOP/s divide.
double task_flops(const SearchTask& task);

/// The cost model's options of a tuning with `options`: its cost_model, seeded with its seed (the
/// model tune() makes when no shared_cost_model is given; run_job's shared model is made alike).
CostModelOptions tuning_model_options(const TuningOptions& options);

/// The tuning curve of `records` (in their order; one point per trial): the best schedule's cost
/// (ScheduleCosts) after each trial and the re-measurements that follow it, with GFLOP/s from
/// `flops` (0: left 0).
std::vector<TuningCurvePoint> tuning_curve(const std::vector<TuningRecord>& records, double flops);

}  // namespace tessel
