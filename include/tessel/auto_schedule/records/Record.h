// Tuning records: one measured candidate per line of a JSON-lines log (docs/design.md, decision 6;
// docs/tuning.md, "Records", has the format in full and its versioning policy).
//
//   RecordWriter log("tuning_logs/matmul.jsonl");           // cuts a torn last line first
//   log.append({make_record(task, input, result, seed, round)});   // one write per line, then
//                                                                  // fdatasync
//   RecordLog read = read_records("tuning_logs/matmul.jsonl");   // or a folder of logs
//   read.records;   // the lines that parsed and checked, older versions migrated
//   read.skipped;   // the rest, counted by reason (read.skip_reasons): never a crash
//
// A log is untrusted input: it may be truncated by a crash, edited by hand, or written by another
// tessel. The reader skips (and counts) a line that is too long, nested too deeply, not JSON, of
// the wrong types, out of range (NaN is no JSON number; costs must be finite and non-negative),
// from an unknown format version, or whose schedule names another DAG than its task. It never
// throws for a line; only an unreadable file is an error.
#pragma once

#include <cstdint>
#include <istream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tessel/auto_schedule/measure/Measure.h"
#include "tessel/auto_schedule/task/SearchTask.h"

namespace tessel {

/// The record format version this tessel writes, and the newest it reads (docs/tuning.md).
/// Version 1 was the bare schedule record (Schedule::to_json, no task or costs); the reader
/// migrates it.
constexpr int kRecordFormatVersion = 2;

/// Lines longer than this are skipped unread ("too long").
constexpr size_t kMaxRecordLineBytes = size_t(1) << 20;

/// One measured candidate (one line of a log).
struct TuningRecord {
    // The task.
    std::string dag_hash;            ///< lowercase hex, as SearchTask::dag_hash_hex writes it
    std::string workload;            ///< registered workload name ("" for a DAG task)
    std::string params_json = "[]";  ///< its parameters (workload_params_to_json)
    std::string target;              ///< canonical target string ("" in migrated v1 records)
    HardwareParams hardware;
    /// The task's constant inputs (SearchTask::constant, the layout-rewrite option): its steps
    /// may pre_transform them. Empty when off, and in records written before the option.
    std::vector<std::string> constant;
    // The candidate.
    std::string schedule_json;  ///< Schedule::to_json(): the steps and the DAG's workload key
    // The measurement.
    MeasureError error = MeasureError::None;
    std::string error_message;
    std::vector<double> costs;  ///< seconds, one per repeat
    double build_seconds = 0;
    double run_seconds = 0;
    double timestamp = 0;  ///< seconds since the Unix epoch
    // Provenance.
    std::string tessel_version;  ///< of the tessel that measured it
    uint64_t seed = 0;           ///< the search's seed
    int64_t round = 0;           ///< the search round that proposed it
    CandidateOrigin origin = CandidateOrigin::Manual;
    int format_version = kRecordFormatVersion;  ///< as read (before migration)

    /// Measured without error, with at least one cost.
    bool ok() const { return error == MeasureError::None && !costs.empty(); }
    /// A trial: a candidate's first measurement; false for a re-measurement (origin Remeasure)
    /// and a measurement of the final check (origin Check).
    bool is_trial() const {
        return origin != CandidateOrigin::Remeasure && origin != CandidateOrigin::Check;
    }
    /// The mean of costs (infinity when !ok()).
    double mean_cost() const;
    /// "<workload key> <target> <dag hash>", as SearchTask::key() of its task.
    std::string task_key() const;
};

/// The record of measuring `input` of `task` with `result`, proposed in `round` of a search with
/// `seed`; the tessel version is this one's.
TuningRecord make_record(const SearchTask& task, const MeasureInput& input,
                         const MeasureResult& result, uint64_t seed = 0, int64_t round = 0);

/// The record as one line of JSON (no newline).
std::string record_to_json(const TuningRecord& record);

/// Parses one line (checked as the file comment says; older versions migrated); nullopt with
/// the reason in `*why` when it is skipped. Never throws.
std::optional<TuningRecord> record_from_json(const std::string& line, std::string* why = nullptr);

/// What reading a log gave.
struct RecordLog {
    std::vector<TuningRecord> records;
    int64_t skipped = 0;                          ///< lines skipped (blank lines are not counted)
    std::map<std::string, int64_t> skip_reasons;  ///< reason -> lines
    int64_t migrated = 0;                         ///< records read from an older version
};

/// Reads every line of `in` (see the file comment).
RecordLog read_records(std::istream& in);
/// Reads the log at `path`; a missing file is an empty log. A folder (as `tessel-tune run
/// --log-dir` writes, one log per task) reads as every *.jsonl file under it, recursively, in
/// path order, their counts summed. RuntimeError when a file cannot be read.
RecordLog read_records(const std::string& path);
/// The *.jsonl files under `folder`, recursively, sorted by path; none when it is no folder.
std::vector<std::string> record_files_under(const std::string& folder);

/// Appends records to a log (docs/design.md, decision 6). Opening cuts off a torn last line (bytes
/// after the last newline, left by a crash mid-write) before anything is appended. Each record
/// is written with one write() of its whole line; append() returns after fdatasync, so a batch
/// counts only once it is on disk.
class RecordWriter {
public:
    /// Opens (creating) `path` for appending; RuntimeError when it cannot.
    explicit RecordWriter(const std::string& path);
    ~RecordWriter();
    RecordWriter(const RecordWriter&) = delete;
    RecordWriter& operator=(const RecordWriter&) = delete;

    /// Appends one line per record and syncs; RuntimeError when a write or the sync fails.
    void append(const std::vector<TuningRecord>& records);
    /// Bytes of a torn last line cut off when the log was opened.
    int64_t truncated_bytes() const { return truncated_; }
    const std::string& path() const { return path_; }

private:
    std::string path_;
    int fd_ = -1;
    int64_t truncated_ = 0;
};

/// The trials among `records` (TuningRecord::is_trial), in order: what a trial count counts.
std::vector<TuningRecord> trial_records(const std::vector<TuningRecord>& records);

/// What each schedule of a log costs, as the tuner and the builds judge it: the median of the
/// mean costs of its successful records (its trial and its re-measurements; failed ones do not
/// count), so that one lucky timing does not make a schedule the best. A schedule is told apart by
/// its task (task_key) and its steps (schedule_json). Records are added in the log's order; the
/// fastest schedule so far is known after each.
///
/// A tuning's final check (records of origin Check, one round of one task: Tuner.h) times the
/// fastest few schedules and the default side by side; its timings are the only fair comparison
/// of them, so they decide. A checked schedule costs the median of its check's timings alone,
/// and the schedules its task had before the check that it did not time rank behind those it
/// did, and behind every schedule first measured after it: the best of hundreds of noisy timings
/// (which a check found slower than the default) does not come back as the best, while a later
/// tuning's faster find still does. A later check of the task decides again.
///
///   ScheduleCosts costs;
///   for (const TuningRecord& r : log.records) costs.add(r);
///   costs.best();   // the fastest schedule's cost and the index of its first record
class ScheduleCosts {
public:
    struct Best {
        double seconds = std::numeric_limits<double>::infinity();
        size_t record = 0;  ///< the index (order of add) of the schedule's first record
    };
    /// Adds the next record; returns its schedule's cost after it (infinity while none of its
    /// records succeeded).
    double add(const TuningRecord& record);
    /// The cost of the record's schedule (infinity when it has no successful record).
    double cost(const TuningRecord& record) const;
    /// Successful measurements of the record's schedule.
    int measurements(const TuningRecord& record) const;
    /// Whether the record's schedule ranks behind its task's last check (the class comment):
    /// measured before that check and not timed in it.
    bool behind_check(const TuningRecord& record) const;
    /// The fastest schedule so far (those behind a check after the rest), over all tasks added;
    /// nullopt while no record succeeded.
    std::optional<Best> best() const;
    /// Every schedule with a successful record, fastest first (as best() ranks them).
    std::vector<Best> ranking() const;

private:
    struct Entry {
        size_t first = 0;
        std::vector<double> samples;  // mean costs of its successful records
        double cost = std::numeric_limits<double>::infinity();
        int64_t check = -1;   // the round of its task's check that timed it (-1: none)
        bool behind = false;  // measured before its task's last check, not timed in it
    };
    using Rank = std::tuple<bool, double, size_t>;  // (behind, cost, first record)
    static std::string key(const TuningRecord& record);
    static Rank rank(const Entry& e) { return {e.behind, e.cost, e.first}; }
    void begin_check(const std::string& task_key, int64_t round);
    std::map<std::string, Entry> entries_;
    std::map<std::string, int64_t> checks_;  // task key -> the round of its last check
    std::set<Rank> order_;                   // the successful schedules
    size_t added_ = 0;
};

/// This tessel's version ("0.1.0"), as records write it.
const char* tessel_version();

}  // namespace tessel
