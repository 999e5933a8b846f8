// The tuner's internals (auto_schedule/tuner/Tuner.h): what it knows of its task, derived from the
// log and this run's measurements (TuningHistory.cpp), its progress output (TuningProgress.cpp),
// and the Tuner itself (Tuner.cpp), which the task scheduler (TaskScheduler.cpp) drives one round
// at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tessel/auto_schedule/measure/MeasureRunner.h"
#include "tessel/auto_schedule/space/SearchSpace.h"
#include "tessel/auto_schedule/tuner/Tuner.h"

namespace tessel::internal {

/// The measured part of a tuning: every record of the task in log order, and what the search
/// and the model derive from them. The log is the only truth: a resumed tuner rebuilds this from
/// the log alone (read_history), and a running one adds each round's records to it (add).
struct TuningHistory {
    /// A state measured without error, with what its measurements say it costs.
    struct Success {
        double seconds = 0;  ///< the median of its measurements (ScheduleCosts)
        size_t record = 0;   ///< its trial's index in `records`
        int measurements = 1;  ///< its trial and its re-measurements (failed ones included)
        SearchState state;
    };
    std::vector<TuningRecord> records;      ///< the task's, in log order (re-measurements too)
    std::unordered_set<std::string> keys;   ///< state_key of every measured state
    std::vector<MeasuredProgram> programs;  ///< one per trial: what the model trains on
    /// The states measured without error, fastest first (the search's seeds; the first is the
    /// best).
    std::vector<Success> successes;
    ScheduleCosts costs;        ///< every schedule's cost, over `records`
    int64_t next_round = 0;     ///< one past the last round recorded
    int64_t skipped_lines = 0;  ///< lines of the log read_records skipped (unreadable records)
    /// Trials done when the best time last improved (for early stopping).
    int64_t last_improvement = 0;
    /// The search's current epoch (TuningOptions::restart_after): where it began in `records`
    /// and `programs`, and the trials done when its best last improved by kEpochGain.
    struct Epoch {
        int64_t number = 0;
        size_t first_record = 0;
        size_t first_program = 0;
        double gain_base = std::numeric_limits<double>::infinity();  ///< its best at that gain
        int64_t last_gain = 0;
    };
    static constexpr double kEpochGain = 0.01;
    Epoch epoch;
    double best_seconds = std::numeric_limits<double>::infinity();
    std::optional<Schedule> best_schedule;

    /// Records that are trials (TuningRecord::is_trial: not re-measurements).
    int64_t trials() const { return trials_; }
    /// Adds measured records with the schedules they measured (nullopt: the record's steps did not
    /// replay), extracting the trials' features on `threads` threads. A re-measurement updates the
    /// cost of its schedule's success (matched by schedule_json); one of a schedule without a
    /// successful trial here only counts in `costs`.
    void add(const SearchTask& task, std::vector<TuningRecord> batch,
             const std::vector<std::optional<Schedule>>& schedules, int threads);
    /// Up to `n` of the fastest states measured in the current epoch.
    std::vector<SearchState> epoch_states(size_t n) const;
    /// The current epoch's successes and programs.
    size_t epoch_successes() const;
    std::vector<MeasuredProgram> epoch_programs() const;
    /// Ends a round: a new epoch begins when the current one's best has not improved by
    /// kEpochGain in the last `restart_after` trials (0: never). True when one began.
    bool end_round(int64_t restart_after);

private:
    void add_success(double seconds, const Schedule& schedule);
    void remeasured(const TuningRecord& r);
    int64_t trials_ = 0;
};

/// The history in the log at `path` for `task` (a missing file is an empty history), its epochs
/// ended round by round as the tuner that wrote it ended them (`restart_after`). RuntimeError
/// when the log holds records of another task, naming both, or cannot be read.
TuningHistory read_history(const SearchTask& task, const std::string& path,
                           int64_t restart_after, int threads);

/// Prints the tuner's progress (TuningOptions::verbose): on a terminal (stderr) one line refreshed
/// in place, otherwise one line per round; and the best schedule at the end, on stdout.
class ProgressPrinter {
public:
    explicit ProgressPrinter(int verbose);
    void start(const TuningProgress& p, const std::string& log_file);
    void round(const TuningProgress& p);
    void finish(const TuningResult& r, const std::string& task);

private:
    int verbose_;
    bool tty_;
    bool open_line_ = false;  // a refreshed line is on the terminal, without its newline
};

/// One task's tuning, round by round (Tuner.cpp). tune() runs rounds until finished(); the task
/// scheduler runs one round of the task it picks (run_round), after set_trials.
class Tuner {
public:
    Tuner(const SearchTask& task, const TuningOptions& options);

    bool finished();
    std::vector<MeasureInput> search();
    std::vector<MeasureResult> measure(const std::vector<MeasureInput>& batch);
    void record(const std::vector<MeasureInput>& batch, const std::vector<MeasureResult>& results);
    void remeasure();
    void train();
    void report_round();
    /// One round: search, measure, record, re-measure, train, report. False, measuring
    /// nothing, when the search found no candidate (stop reason "exhausted") or should_stop asked
    /// to stop.
    bool run_round();
    void stop(const char* reason) { stop_reason_ = reason; }
    bool stop_requested();
    TuningResult result();

    // For the task scheduler.
    const TuningHistory& history() const { return history_; }
    const SearchTask& task() const { return task_; }
    double flops() const { return flops_; }
    const std::string& stop_reason() const { return stop_reason_; }
    /// The trials in all (TuningOptions::trials): a round measures at most trials - done.
    void set_trials(int64_t trials) { options_.trials = trials; }

private:
    std::vector<SearchState> random_states(int n, uint64_t seed,
                                           std::unordered_set<std::string>& chosen) const;
    int round_size() const;
    TuningProgress progress() const;

    SearchTask task_;
    TuningOptions options_;
    int threads_;
    double flops_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    TuningHistory history_;
    int64_t resumed_;
    RecordWriter log_;
    std::shared_ptr<MeasureRunner> measurer_;
    SearchSpace space_;
    std::shared_ptr<SharedCostModel> model_;
    std::optional<Schedule> default_;  // the default schedule, while it is to be measured
    int member_;  // this task's in model_
    ProgressPrinter printer_;
    TuningRound round_;
    std::vector<MeasuredProgram> batch_programs_;
    std::vector<TuningRound> rounds_;
    std::string stop_reason_;
};

}  // namespace tessel::internal
