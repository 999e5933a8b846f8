// Tuning records: a record round-trips through its JSON line; the writer appends one line per
// record and cuts a torn tail when it opens a log; the reader skips and counts bad lines, refuses
// newer versions and schedules of another DAG, and migrates version-1 (bare schedule) records;
// a schedule measured more than once costs the median of its measurements; a folder reads as its
// logs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessel/auto_schedule/records/Record.h"
#include "tessel/auto_schedule/tuner/Tuner.h"

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

// A folder of logs (tessel-tune's --log-dir: one a task) reads as its *.jsonl files under it, in
// path order, nested ones too, other files passed over, the skipped lines summed.
TEST(Record, AFolderReadsAsItsLogsInPathOrder) {
    namespace fs = std::filesystem;
    SearchTask task("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)},
                    Target("llvm -num-cores=2"));
    fs::path dir = fs::path(::testing::TempDir()) / ("logs_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "nested");
    auto line = [&](double cost) { return record_to_json(sample_record(task, cost)) + "\n"; };
    std::ofstream(dir / "b.jsonl") << line(2e-3) << "not json\n";
    std::ofstream(dir / "a.jsonl") << line(1e-3);
    std::ofstream(dir / "nested" / "c.jsonl") << line(3e-3) << "[1]\n";
    std::ofstream(dir / "notes.txt") << line(9e-3);
    RecordLog log = read_records(dir.string());
    ASSERT_EQ(log.records.size(), 3u);
    EXPECT_DOUBLE_EQ(log.records[0].costs[0], 1e-3);
    EXPECT_DOUBLE_EQ(log.records[1].costs[0], 2e-3);
    EXPECT_DOUBLE_EQ(log.records[2].costs[0], 3e-3);
    EXPECT_EQ(log.skipped, 2);
    EXPECT_EQ(log.skip_reasons["not JSON (truncated?)"], 1);
    EXPECT_EQ(log.skip_reasons["not a JSON object"], 1);
    EXPECT_EQ(record_files_under(dir.string()).size(), 3u);
    EXPECT_TRUE(record_files_under((dir / "a.jsonl").string()).empty());
    fs::remove_all(dir);
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

namespace {

// A record of `task` with one split of the output stage by `factor` (tells schedules apart),
// timed at `cost` seconds (0: failed).
TuningRecord timed(const SearchTask& task, int factor, double cost,
                   CandidateOrigin origin = CandidateOrigin::Random) {
    Schedule s = task.initial_schedule();
    s.split(2, 0, factor);
    MeasureResult result;
    if (cost > 0)
        result.costs = {cost};
    else
        result.error = MeasureError::RunError;
    return make_record(task, {s, origin}, result);
}

}  // namespace

// A schedule costs the median of its successful measurements: a lucky first timing re-measured
// twice slower stops being the best, failed re-measurements do not count, and the curve has one
// point per trial, each after the re-measurements that follow it.
TEST(ScheduleCosts, TheMedianOfEachSchedulesMeasurementsChoosesTheBest) {
    SearchTask task("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)}, Target("llvm"));
    const auto re = CandidateOrigin::Remeasure;
    std::vector<TuningRecord> log = {
        timed(task, 2, 1.0e-3),      // 0: lucky
        timed(task, 4, 1.2e-3),      // 1
        timed(task, 2, 1.5e-3, re),  // 2: schedule 0 again
        timed(task, 2, 0, re),       // 3: a failed re-measurement: ignored
        timed(task, 8, 0),           // 4: a failed trial
        timed(task, 2, 1.6e-3, re),  // 5: schedule 0: median of 1.0, 1.5, 1.6
        timed(task, 4, 1.3e-3, re),  // 6: schedule 1: median of 1.2, 1.3
    };
    ScheduleCosts costs;
    EXPECT_FALSE(costs.best().has_value());
    std::vector<double> after;
    for (const TuningRecord& r : log) after.push_back(costs.add(r));
    EXPECT_DOUBLE_EQ(after[0], 1.0e-3);
    EXPECT_DOUBLE_EQ(after[2], 1.25e-3);  // two: their mean
    EXPECT_DOUBLE_EQ(after[3], 1.25e-3);
    EXPECT_TRUE(std::isinf(after[4]));
    EXPECT_DOUBLE_EQ(after[5], 1.5e-3);
    EXPECT_DOUBLE_EQ(after[6], 1.25e-3);
    EXPECT_EQ(costs.measurements(log[0]), 3);
    EXPECT_EQ(costs.measurements(log[4]), 0);
    ASSERT_TRUE(costs.best().has_value());
    EXPECT_EQ(costs.best()->record, 1u);
    EXPECT_DOUBLE_EQ(costs.best()->seconds, 1.25e-3);
    std::vector<ScheduleCosts::Best> ranking = costs.ranking();
    ASSERT_EQ(ranking.size(), 2u);
    EXPECT_EQ(ranking[1].record, 0u);

    // The same steps on another target are another schedule.
    ScheduleCosts two;
    two.add(log[0]);
    SearchTask other("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)},
                     Target("llvm -num-cores=1"));
    two.add(timed(other, 2, 5e-3, re));
    EXPECT_DOUBLE_EQ(two.best()->seconds, 1.0e-3);
    EXPECT_EQ(two.measurements(log[0]), 1);

    EXPECT_EQ(trial_records(log).size(), 3u);
    // Trials 0, 1 (then the re-measurements 2, 3) and 4 (then 5, 6).
    std::vector<TuningCurvePoint> curve = tuning_curve(log, 0);
    ASSERT_EQ(curve.size(), 3u);
    EXPECT_DOUBLE_EQ(curve[0].best_seconds, 1.0e-3);
    EXPECT_DOUBLE_EQ(curve[1].best_seconds, 1.2e-3);  // schedule 0 now costs 1.25
    EXPECT_DOUBLE_EQ(curve[2].best_seconds, 1.25e-3);
}

// A final check (records of origin "check", one round of one task) decides among the schedules
// it timed by its timings alone; the task's schedules it did not time rank behind them, and
// behind any schedule first measured after it; a later check decides again; another task's
// schedules are not moved.
TEST(ScheduleCosts, AFinalCheckDecidesAmongTheSchedulesItTimed) {
    SearchTask task("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)}, Target("llvm"));
    SearchTask other("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)},
                     Target("llvm -num-cores=1"));
    const auto check = CandidateOrigin::Check;
    auto in_round = [](TuningRecord r, int64_t round) {
        r.round = round;
        return r;
    };
    ScheduleCosts costs;
    costs.add(in_round(timed(task, 2, 1.0e-3, CandidateOrigin::Default), 0));  // 0: the default
    costs.add(in_round(timed(task, 4, 0.5e-3), 0));                            // 1: lucky
    costs.add(in_round(timed(task, 8, 0.7e-3), 0));                            // 2: never checked
    costs.add(in_round(timed(other, 2, 0.1e-3), 0));                           // 3: another task
    EXPECT_EQ(costs.best()->record, 3u);
    ScheduleCosts one_task;  // the same log without the other task
    auto add_all = [&](const TuningRecord& r) {
        costs.add(r);
        if (r.task_key() == task.key()) one_task.add(r);
    };
    one_task.add(in_round(timed(task, 2, 1.0e-3, CandidateOrigin::Default), 0));
    one_task.add(in_round(timed(task, 4, 0.5e-3), 0));
    one_task.add(in_round(timed(task, 8, 0.7e-3), 0));
    EXPECT_EQ(one_task.best()->record, 1u);
    // The check: the lucky one and the default, in turns.
    for (double lucky : {1.2e-3, 1.3e-3, 1.25e-3}) {
        add_all(in_round(timed(task, 4, lucky, check), 0));
        add_all(in_round(timed(task, 2, 0.9e-3, check), 0));
    }
    ASSERT_TRUE(one_task.best().has_value());
    EXPECT_EQ(one_task.best()->record, 0u);  // the default, at its check's median
    EXPECT_DOUBLE_EQ(one_task.best()->seconds, 0.9e-3);
    TuningRecord lucky_trial = timed(task, 4, 1);
    TuningRecord unchecked = timed(task, 8, 1);
    EXPECT_DOUBLE_EQ(one_task.cost(lucky_trial), 1.25e-3);  // the check's timings alone
    EXPECT_EQ(one_task.measurements(lucky_trial), 3);
    EXPECT_TRUE(one_task.behind_check(unchecked));  // 0.7 ms, from before the check
    EXPECT_FALSE(one_task.behind_check(lucky_trial));
    std::vector<ScheduleCosts::Best> ranking = one_task.ranking();
    ASSERT_EQ(ranking.size(), 3u);
    EXPECT_EQ(ranking[1].record, 1u);
    EXPECT_EQ(ranking[2].record, 2u);
    EXPECT_EQ(costs.best()->record, 3u);  // the other task's schedule is not moved
    EXPECT_FALSE(costs.behind_check(timed(other, 2, 1)));

    // A schedule first measured after the check competes with the checked ones by its median.
    add_all(in_round(timed(task, 16, 0.95e-3), 1));
    EXPECT_EQ(one_task.best()->record, 0u);
    add_all(in_round(timed(task, 32, 0.8e-3), 1));
    EXPECT_DOUBLE_EQ(one_task.best()->seconds, 0.8e-3);
    // A later check: the 0.8 ms find and the default; everything else behind.
    for (int turn = 0; turn < 3; ++turn) {
        add_all(in_round(timed(task, 32, 0.85e-3, check), 1));
        add_all(in_round(timed(task, 2, 1.1e-3, check), 1));
    }
    EXPECT_DOUBLE_EQ(one_task.best()->seconds, 0.85e-3);
    EXPECT_TRUE(one_task.behind_check(lucky_trial));
    EXPECT_FALSE(one_task.behind_check(timed(task, 2, 1)));
    EXPECT_DOUBLE_EQ(one_task.cost(timed(task, 2, 1)), 1.1e-3);
    // A failed check timing does not count; a schedule whose check timings all failed has none.
    ScheduleCosts failed;
    failed.add(in_round(timed(task, 2, 1.0e-3, CandidateOrigin::Default), 0));
    failed.add(in_round(timed(task, 4, 0.5e-3), 0));
    failed.add(in_round(timed(task, 4, 0, check), 0));
    failed.add(in_round(timed(task, 2, 0.9e-3, check), 0));
    EXPECT_TRUE(std::isinf(failed.cost(lucky_trial)));
    EXPECT_EQ(failed.ranking().size(), 1u);
    EXPECT_EQ(failed.best()->record, 0u);
    EXPECT_FALSE(timed(task, 4, 1, check).is_trial());
}

// Layout rewrite: a task with a constant input lists it (in its JSON and its records, which
// round-trip), its DAG differs from the workload's without it, the record's steps carry the
// layout (pre_transform replays), and a record without the field (written before it) reads
// with none.
TEST(Record, ConstantInputsAndTheLayoutRoundTrip) {
    const WorkloadParams params = {int64_t(32), int64_t(16), int64_t(8), Float(32)};
    Target target("llvm -num-cores=2");
    SearchTask plain("matmul", params, target);
    const std::string b = plain.dag().inputs[1].name();
    SearchTask task("matmul", params, target, std::nullopt, {b});
    EXPECT_EQ(task.constant(), std::vector<std::string>{b});
    EXPECT_TRUE(plain.constant().empty());
    EXPECT_NE(task.dag_hash(), plain.dag_hash());
    SearchTask again = SearchTask::from_json(task.to_json());
    EXPECT_EQ(again.key(), task.key());
    EXPECT_EQ(again.constant(), task.constant());
    EXPECT_THROW(SearchTask("matmul", params, target, std::nullopt, {"nope"}), DSLError);

    Schedule s = task.initial_schedule();
    const int mm = s.stage_of(task.dag().outputs[0]);
    int pack = s.cache_read(s.stage_of(task.dag().inputs[1]), "global", {mm});
    s.storage_split(pack, 1, 4);
    s.pre_transform(pack);
    MeasureResult result;
    result.costs = {1e-3};
    TuningRecord r = make_record(task, {s, CandidateOrigin::Mutation}, result);
    EXPECT_EQ(r.constant, std::vector<std::string>{b});
    std::string line = record_to_json(r);
    std::string why;
    std::optional<TuningRecord> back = record_from_json(line, &why);
    ASSERT_TRUE(back) << why;
    EXPECT_EQ(back->constant, r.constant);
    EXPECT_EQ(back->task_key(), task.key());
    EXPECT_EQ(record_to_json(*back), line);
    Schedule replayed = task.apply_record(back->schedule_json);
    EXPECT_TRUE(replayed.stage(pack).pre_transform);

    std::string plain_line = record_to_json(sample_record(plain));
    EXPECT_EQ(plain_line.find("\"constant\""), std::string::npos);
    std::optional<TuningRecord> old = record_from_json(plain_line, &why);
    ASSERT_TRUE(old) << why;
    EXPECT_TRUE(old->constant.empty());
}
