// Apply-best: builds use the best schedule a tuning log holds for their computation
// (docs/tuning.md, "Applying the best record").
//
//   {
//       ApplyHistoryBest best("tuning_logs/matmul.jsonl");
//       Schedule s = op::default_schedule({C}, target);   // the best record, replayed
//       Module m = build(create_schedule({C}), {A, B, C}, target);   // likewise
//   }   // back to the default schedules
//
// While an ApplyHistoryBest lives it is the current context of the thread that made it (contexts
// nest; the innermost answers). In that thread, op::default_schedule() and build() of a schedule
// without steps choose the schedule of the task (its DAG's structural hash, the target):
//  1. the fastest schedule whose records' canonical target string is the target's, else
//  2. the fastest schedule of the same target kind and float mode whose CPU features are all
//     enabled on the target (llvm: a log tuned on one CPU model serves another that has its
//     features) or whose GPU architecture is not newer than the target's (cuda), with one warning
//     naming both targets, else
//  3. the default schedule, with one warning naming the workload.
// A schedule is as fast as the median of its error-free measurements (ScheduleCosts, Record.h:
// the tuner re-measures its fastest states).
// A record is only ever applied to the DAG whose hash it names, on a schedule with the target's
// limits (schedule_limits_for: a GPU record may auto-unroll 1024 steps); one that no longer
// replays (a step the schedule refuses) is passed over for the next, with a warning naming the
// step. Schedules with steps are the caller's and are never replaced. Warnings go to the sink
// given (stderr by default), once per task.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tessel/Target.h"
#include "tessel/auto_schedule/records/Record.h"
#include "tessel/schedule/Schedule.h"

namespace tessel {

/// Where apply-best's warnings go.
using WarningSink = std::function<void(const std::string& message)>;

/// The best records of a log, and the schedule choice they make (see the file comment).
class ApplyHistoryBest {
public:
    /// Reads the log at `log_path` (read_records: bad lines are skipped and counted) and makes
    /// this the thread's current context. RuntimeError when the file cannot be read.
    explicit ApplyHistoryBest(const std::string& log_path, WarningSink warn = {});
    /// From records already read.
    explicit ApplyHistoryBest(std::vector<TuningRecord> records, WarningSink warn = {});
    /// Not a context: from records already read, and never any thread's current context (the
    /// shipped logs, auto_schedule/records/ShippedLogs.h, which every thread asks). It does not
    /// warn about a DAG it holds no record of.
    struct Detached {};
    ApplyHistoryBest(Detached, std::vector<TuningRecord> records, WarningSink warn = {});
    /// Stops being the thread's current context.
    ~ApplyHistoryBest();
    ApplyHistoryBest(const ApplyHistoryBest&) = delete;
    ApplyHistoryBest& operator=(const ApplyHistoryBest&) = delete;

    /// The record chosen for the DAG of hash `dag_hash_hex` on `target` (rules 1 and 2), and
    /// whether it matched the target exactly; nullopt when none applies. Records are tried
    /// fastest first, among exact matches before compatible ones; the caller replays.
    struct Match {
        const TuningRecord* record = nullptr;
        bool exact = false;
    };
    std::vector<Match> candidates(const std::string& dag_hash_hex, const Target& target) const;

    /// The schedule for the computation of `outputs` on `target`: the best record replayed on
    /// a fresh schedule of `outputs`, or `fallback()` (rule 3). Warns as the file comment says,
    /// naming the workload `label` (default: a record's workload for the DAG, else the DAG's
    /// outputs and hash).
    Schedule choose(const std::vector<Tensor>& outputs, const Target& target,
                    const std::function<Schedule()>& fallback, const std::string& label = "");
    /// choose() for a search task (its registered workload named in warnings), falling back to
    /// the task's default schedule (op::default_schedule_rules).
    Schedule choose(const SearchTask& task);

    /// The warnings given so far, in order.
    std::vector<std::string> warnings() const;
    /// The log's reading statistics (records kept, lines skipped by reason).
    int64_t records() const { return static_cast<int64_t>(records_.size()); }
    int64_t skipped_lines() const { return skipped_; }

private:
    ApplyHistoryBest(RecordLog log, WarningSink warn, bool context);
    void warn_once(const std::string& key, const std::string& message);
    std::vector<TuningRecord> records_;
    // the first record of each schedule that succeeded, fastest first
    std::map<std::string, std::vector<size_t>> by_hash_;
    int64_t skipped_ = 0;
    WarningSink sink_;
    bool detached_ = false;  // no context: no warning for a DAG it has no record of
    std::vector<std::string> warnings_;
    std::set<std::string> warned_;
    mutable std::mutex warnings_mutex_;  // choose() may run on several threads (detached)
};

/// The thread's current (innermost) apply-best context, or null.
ApplyHistoryBest* current_apply_history_best();

}  // namespace tessel
