// Tuning records: a record round-trips through its JSON line; the writer appends one line per
// record and cuts a torn tail when it opens a log; the reader skips and counts bad lines, refuses
// newer versions and schedules of another DAG, and migrates version-1 (bare schedule) records.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "tessel/auto_schedule/Record.h"

using namespace tessel;

namespace {

TuningRecord sample_record(const SearchTask& task, double cost = 1.5e-3) {
    Schedule s = task.initial_schedule();
    s.split(2, 0, 8);
    MeasureResult result;
    result.costs = {cost, cost * 1.1};
    result.build_seconds = 0.25;
    result.run_seconds = 0.125;
    result.timestamp = 1.7e9;
    return make_record(task, {s, CandidateOrigin::Mutation}, result, 42, 3);
}

std::string temp_log(const std::string& name) {
    std::string path = ::testing::TempDir() + name + "_" + std::to_string(getpid()) + ".jsonl";
    std::remove(path.c_str());
    return path;
}

}  // namespace

TEST(Record, RoundTripsThroughOneJsonLine) {
    SearchTask task("matmul", {int64_t(32), int64_t(16), int64_t(8), Float(32)},
                    Target("llvm -num-cores=2"));
    TuningRecord r = sample_record(task);
    std::string line = record_to_json(r);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    std::string why;
    std::optional<TuningRecord> back = record_from_json(line, &why);
    ASSERT_TRUE(back) << why;
    EXPECT_EQ(back->dag_hash, task.dag_hash_hex());
    EXPECT_EQ(back->workload, "matmul");
    EXPECT_EQ(back->target, task.target().str());
    EXPECT_EQ(back->hardware, task.hardware());
    EXPECT_EQ(back->costs, r.costs);
    EXPECT_EQ(back->origin, CandidateOrigin::Mutation);
    EXPECT_EQ(back->seed, 42u);
    EXPECT_EQ(back->round, 3);
    EXPECT_EQ(back->tessel_version, tessel_version());
    EXPECT_EQ(back->task_key(), task.key());
    EXPECT_EQ(record_to_json(*back), line);
    // The schedule replays on the task.
    EXPECT_EQ(task.apply_record(back->schedule_json).steps().size(), 1u);
}

TEST(Record, WriterAppendsLinesAndCutsATornTail) {
    SearchTask task("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)},
                    Target("llvm -num-cores=2"));
    std::string path = temp_log("writer");
    {
        RecordWriter w(path);
        EXPECT_EQ(w.truncated_bytes(), 0);
        w.append({sample_record(task, 1e-3), sample_record(task, 2e-3)});
    }
    std::string torn = record_to_json(sample_record(task, 3e-3)).substr(0, 50);
    std::ofstream(path, std::ios::app) << torn;  // a crash in the middle of a write
    {
        RecordWriter w(path);
        EXPECT_EQ(w.truncated_bytes(), static_cast<int64_t>(torn.size()));
        w.append({sample_record(task, 4e-3)});
    }
    RecordLog log = read_records(path);
    EXPECT_EQ(log.skipped, 0);
    ASSERT_EQ(log.records.size(), 3u);
    EXPECT_DOUBLE_EQ(log.records[2].costs[0], 4e-3);
    EXPECT_TRUE(read_records(temp_log("missing")).records.empty());
}

TEST(Record, ReaderSkipsAndCountsBadLines) {
    SearchTask task("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)},
                    Target("llvm -num-cores=2"));
    std::string good = record_to_json(sample_record(task));
    std::string newer = good, other_dag = good, nan_cost = good;
    newer.replace(newer.find("\"format_version\":2"), 18, "\"format_version\":99");
    size_t at = other_dag.find("\"workload_key\":\"") + 16;
    other_dag.replace(at, other_dag.find('"', at) - at, "123456789abcdef");
    nan_cost.replace(nan_cost.find("\"costs\":[") + 9, 0, "NaN,");
    std::istringstream in(good + "\n\n" + newer + "\n" + other_dag + "\n" + nan_cost + "\n" +
                          good.substr(0, good.size() / 2) + "\n" + "[1,2]\n" + good);
    RecordLog log = read_records(in);
    EXPECT_EQ(log.records.size(), 2u);
    EXPECT_EQ(log.skipped, 5);
    EXPECT_EQ(log.skip_reasons["unknown (newer) format version"], 1);
    EXPECT_EQ(log.skip_reasons["the schedule was recorded for another DAG than the task's"], 1);
    EXPECT_EQ(log.skip_reasons["not JSON (truncated?)"], 2);
    EXPECT_EQ(log.skip_reasons["not a JSON object"], 1);
}

TEST(Record, VersionOneScheduleRecordsAreMigrated) {
    SearchTask task("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)},
                    Target("llvm -num-cores=2"));
    Schedule s = task.initial_schedule();
    s.split(2, 1, 4);
    std::istringstream in(s.to_json() + "\n");  // what issue 15's records were
    RecordLog log = read_records(in);
    ASSERT_EQ(log.records.size(), 1u) << log.skip_reasons.begin()->first;
    EXPECT_EQ(log.migrated, 1);
    const TuningRecord& r = log.records[0];
    EXPECT_EQ(r.format_version, 1);
    EXPECT_EQ(r.dag_hash, task.dag_hash_hex());
    EXPECT_EQ(r.target, "");
    EXPECT_FALSE(r.ok());  // no measurement: never the best of anything
    EXPECT_EQ(task.apply_record(r.schedule_json).steps().size(), 1u);
    EXPECT_TRUE(record_from_json(record_to_json(r)).has_value() == false);  // v2 needs costs
}
