// The tuner's internals (auto_schedule/Tuner.h): what it knows of its task, derived from the log
// and this run's measurements (TuningHistory.cpp), and its progress output (TuningProgress.cpp).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tessel/auto_schedule/SearchSpace.h"
#include "tessel/auto_schedule/Tuner.h"

namespace tessel::internal {

/// The measured part of a tuning: every record of the task in log order, and what the search
/// and the model derive from them. The log is the only truth: a resumed tuner rebuilds this from
/// the log alone (read_history), and a running one adds each round's records to it (add).
struct TuningHistory {
    std::vector<TuningRecord> records;      ///< the task's, in log order
    std::unordered_set<std::string> keys;   ///< state_key of every measured state
    std::vector<MeasuredProgram> programs;  ///< one per record: what the model trains on
    /// The states measured without error, fastest first (the search's seeds).
    std::vector<std::pair<double, SearchState>> successes;
    int64_t next_round = 0;     ///< one past the last round recorded
    int64_t skipped_lines = 0;  ///< lines of the log read_records skipped (unreadable records)
    /// Trials done when the best time last improved (for early stopping).
    int64_t last_improvement = 0;
    double best_seconds = std::numeric_limits<double>::infinity();
    std::optional<Schedule> best_schedule;

    int64_t trials() const { return static_cast<int64_t>(records.size()); }
    /// Adds measured records with the schedules they measured (nullopt: the record's steps did not
    /// replay), extracting their features on `threads` threads.
    void add(const SearchTask& task, std::vector<TuningRecord> batch,
             const std::vector<std::optional<Schedule>>& schedules, int threads);
    /// Up to `n` of the fastest measured states.
    std::vector<SearchState> best_states(size_t n) const;
};

/// The history in the log at `path` for `task` (a missing file is an empty history). RuntimeError
/// when the log holds records of another task, naming both, or cannot be read.
TuningHistory read_history(const SearchTask& task, const std::string& path, int threads);

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

}  // namespace tessel::internal
