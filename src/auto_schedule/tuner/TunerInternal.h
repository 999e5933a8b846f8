// The tuner's internals (auto_schedule/tuner/Tuner.h): what it knows of its task, derived from the
// log and this run's measurements (TuningHistory.cpp), its progress output (TuningProgress.cpp),
// and the Tuner itself (Tuner.cpp), which the task scheduler (TaskScheduler.cpp) drives one round
// at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
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
        double seconds = 0;    ///< the median of its measurements (ScheduleCosts)
        bool behind = false;   ///< behind its task's last check (ScheduleCosts::behind_check)
        size_t record = 0;     ///< its trial's index in `records`
        int measurements = 1;  ///< its trial and its re-measurements (failed ones included)
        SearchState state;
    };
    std::vector<TuningRecord> records;      ///< the task's, in log order (re-measurements too)
    std::unordered_set<std::string> keys;   ///< state_key of every measured state
    std::vector<MeasuredProgram> programs;  ///< one per trial: what the model trains on
    /// The states measured without error, fastest first as ScheduleCosts ranks them (the
    /// search's seeds; the first is the best).
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
    void rerank();
    int64_t trials_ = 0;
};

/// A round of the log read apart from the history (read_history's `held`): its records in log
/// order, with the schedules they replay to.
struct LoggedRound {
    std::vector<TuningRecord> records;
    std::vector<std::optional<Schedule>> schedules;
};

/// The history in the log at `path` for `task` (a missing file is an empty history), its epochs
/// ended round by round as the tuner that wrote it ended them (`restart_after`). With `held`,
/// the log's last round is left out of the history and put there instead (a search-ahead
/// tuner's resume: its next round was searched without it). RuntimeError when the log holds
/// records of another task, naming both, or cannot be read.
TuningHistory read_history(const SearchTask& task, const std::string& path, int64_t restart_after,
                           int threads, LoggedRound* held = nullptr);

/// A round searched and not yet recorded (Tuner::prepare): in flight until completed.
struct PreparedRound {
    TuningRound round;  ///< its bookkeeping: its number, its search's figures
    std::vector<MeasureInput> batch;
    std::vector<std::string> keys;       ///< state_key of each of `batch`
    MeasureRequest request;              ///< the batch's, made on the preparing thread
    std::vector<MeasureResult> results;  ///< once measured (Tuner::measure)
    /// A resumed round: its records are the log's (read_history's `held`), measured already.
    std::optional<LoggedRound> logged;
};

/// Runs `measure` and `meanwhile`: at the same time, `measure` on a thread of its own, when
/// `concurrently`; else `measure`, then `meanwhile`. Returns once both have ended; an exception
/// of either is rethrown here (`measure`'s first), so no thread outlives the call.
void measure_while(bool concurrently, const std::function<void()>& measure,
                   const std::function<void()>& meanwhile);

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

/// One task's tuning, round by round (Tuner.cpp). tune() runs rounds until finished(), or with
/// search_ahead run_rounds_ahead(); the task scheduler runs one round of the task it picks
/// (run_round, after set_trials), or prepares, measures and completes rounds itself.
///
/// A round is prepare (the search) + measure + complete (record, re-measure, train, report).
/// Rounds are completed in the order they were prepared; a round prepared while others are in
/// flight (prepared, not completed) is numbered after them and excludes their candidates.
class Tuner {
public:
    /// `hold_back_last_round`: a search-ahead resume (TuningOptions::search_ahead, tune()): the
    /// log's last round is held back while the next round is searched, then completed from the
    /// log, so that the resumed run searches what the uninterrupted one did.
    Tuner(const SearchTask& task, const TuningOptions& options, bool hold_back_last_round = false);

    bool finished();
    /// Searches the next round: at most `max_trials` candidates, none measured or in flight.
    PreparedRound prepare(int64_t max_trials);
    /// Measures a prepared round: only the measure runner, so it may run on another thread
    /// while this tuner prepares the next round.
    void measure(PreparedRound& round) const;
    /// Records a measured round, re-measures, trains, reports: the oldest in flight.
    void complete(PreparedRound& round);
    /// Forgets a prepared round never measured (a stop).
    void discard(const PreparedRound& round);
    /// Whether measure() may run beside the next prepare (MeasureRunner::times_elsewhere).
    bool measures_elsewhere() const { return measurer_->times_elsewhere(); }
    std::vector<MeasureResult> measure(const std::vector<MeasureInput>& batch);
    void record(const std::vector<MeasureInput>& batch, const std::vector<MeasureResult>& results);
    void remeasure();
    void train();
    void report_round();
    /// One round: search, measure, record, re-measure, train, report. False, measuring
    /// nothing, when the search found no candidate (stop reason "exhausted") or should_stop asked
    /// to stop.
    bool run_round();
    /// Rounds until finished, each searched while the one before it measures (search_ahead).
    void run_rounds_ahead();
    void stop(const char* reason) { stop_reason_ = reason; }
    bool stop_requested();
    /// The final check (TuningOptions::final_measurements; Tuner.cpp), logged; its figures for
    /// result().
    void check_best();
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
    bool taken(const std::string& key) const {
        return history_.keys.count(key) || in_flight_keys_.count(key);
    }
    void replay(PreparedRound& round);
    int round_size() const;
    TuningProgress progress() const;

    SearchTask task_;
    TuningOptions options_;
    int threads_;
    double flops_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    LoggedRound held_;  // the log's last round, held back (hold_back_last_round) until replayed
    TuningHistory history_;
    int64_t resumed_;
    RecordWriter log_;
    std::shared_ptr<MeasureRunner> measurer_;
    SearchSpace space_;
    std::shared_ptr<SharedCostModel> model_;
    std::optional<Schedule> default_;  // the default schedule, while it is to be measured
    int member_;                       // this task's in model_
    ProgressPrinter printer_;
    TuningRound round_;
    std::vector<MeasuredProgram> batch_programs_;
    std::vector<TuningRound> rounds_;
    std::string stop_reason_;
    void note_check();
    // check_best(): the search's best before it, the best's and the default's medians in it.
    double search_best_seconds_ = std::numeric_limits<double>::infinity();
    double final_seconds_ = std::numeric_limits<double>::infinity();
    double default_seconds_ = std::numeric_limits<double>::infinity();
    bool best_is_default_ = false;
    // Rounds prepared and not completed: their candidates' keys, trials and count.
    std::unordered_set<std::string> in_flight_keys_;
    int64_t in_flight_trials_ = 0;
    int64_t in_flight_rounds_ = 0;
    std::optional<PreparedRound> ahead_;  // prepared on a resume, before the held-back round
};

}  // namespace tessel::internal
