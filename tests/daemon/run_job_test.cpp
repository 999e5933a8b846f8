// Jobs of real tasks (auto_schedule/tuner/Job.h, run_job): the budget spent exactly across tasks, a
// resume from the first k rounds of an uninterrupted run's logs proposing exactly that run's
// round k + 1 (with the job's one cost model and with one per task), the shared model choosing a
// new task's first round, and a crashing or hanging candidate costing that candidate only.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "daemon/DaemonTestUtil.h"
#include "tessel/auto_schedule/tuner/Job.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

// Every task's records (by log file name), in log order.
std::map<std::string, std::vector<TuningRecord>> logs_of(const fs::path& dir) {
    std::map<std::string, std::vector<TuningRecord>> out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".jsonl") {
            RecordLog log = read_records(e.path().string());
            EXPECT_EQ(log.skipped, 0) << e.path();
            out[e.path().filename().string()] = log.records;
        }
    return out;
}

JobRunOptions in(const fs::path& dir) {
    JobRunOptions o;
    o.log_dir = dir.string();
    return o;
}

// A runner that plants test faults in chosen trials (by their order across the job; the
// re-measurements of the fastest are not counted).
class FaultyRunner : public MeasureRunner {
public:
    explicit FaultyRunner(MeasureOptions o) : local_(o) {}
    std::vector<MeasureResult> run(const MeasureRequest& request) override {
        MeasureRequest r = request;
        r.options.allow_test_faults = true;
        for (MeasureCandidate& c : r.candidates) {
            if (c.origin == CandidateOrigin::Remeasure) continue;
            if (seen_ == 3) c.test_fault = TestFault::Segfault;
            if (seen_ == 10) c.test_fault = TestFault::Hang;
            if (seen_ == 17) c.test_fault = TestFault::Abort;
            ++seen_;
        }
        return local_.run(r);
    }

private:
    LocalMeasureRunner local_;
    int seen_ = 0;
};

}  // namespace

TEST(RunJob, SpendsTheBudgetExactlyAndResumesFromTheLogs) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    fs::path dir = fresh_dir();
    Job job = parse_job(small_job(2, 28, 8));
    JobResult r = run_job(job, in(dir));
    EXPECT_EQ(r.schedule.stop_reason, "trials");
    EXPECT_EQ(r.progress.trials, 28);
    ASSERT_EQ(r.schedule.steps.size(), 4u);  // 8 + 8 + 8 + 4
    EXPECT_EQ(r.schedule.steps.back().outcome.measured, 4);
    auto logs = logs_of(dir);
    ASSERT_EQ(logs.size(), 2u);
    size_t total = 0;
    for (const auto& [name, records] : logs) {
        std::vector<TuningRecord> trials = trial_records(records);
        std::set<std::string> keys;
        for (const TuningRecord& rec : trials) keys.insert(rec.schedule_json);
        EXPECT_EQ(keys.size(), trials.size()) << name << ": a state was a trial twice";
        total += trials.size();
    }
    EXPECT_EQ(total, 28u);
    // Each task's log ends with its final check (the default and the fastest, side by side),
    // which its best in the job's progress is the result of.
    auto checks = [](const std::vector<TuningRecord>& records) {
        size_t n = 0;
        while (n < records.size() &&
               records[records.size() - 1 - n].origin == CandidateOrigin::Check)
            ++n;
        return n;
    };
    for (const JobTaskProgress& t : r.progress.tasks) {
        const std::vector<TuningRecord>& records = logs[fs::path(t.log_file).filename().string()];
        EXPECT_GE(checks(records), 3u * 3) << t.name;
        ScheduleCosts costs;
        for (const TuningRecord& rec : records) costs.add(rec);
        ASSERT_TRUE(costs.best().has_value());
        EXPECT_EQ(t.best_seconds, costs.best()->seconds);
        EXPECT_FALSE(costs.behind_check(records[costs.best()->record])) << t.name;
    }
    // More budget: the job goes on from its logs; the task tuned again is checked again, the
    // other is not (nothing new since its check).
    job.trials = 36;
    JobResult more = run_job(job, in(dir));
    EXPECT_EQ(more.progress.resumed_trials, 28);
    EXPECT_EQ(more.progress.trials, 36);
    EXPECT_EQ(more.schedule.steps.size(), 1u);
    EXPECT_EQ(more.schedule.steps[0].step, 4);  // the round after the logs' last
    auto after = logs_of(dir);
    for (size_t i = 0; i < more.progress.tasks.size(); ++i) {
        std::string name = fs::path(more.progress.tasks[i].log_file).filename().string();
        const bool tuned = static_cast<int>(i) == more.schedule.steps[0].task;
        EXPECT_EQ(after[name].size() > logs[name].size(), tuned) << name;
        EXPECT_GE(checks(after[name]), 3u * 3) << name;
    }
}

// The log is the only truth: the first k rounds of a run's logs make a resumed job propose the
// run's round k + 1 exactly: the same task, the same candidates in the same order; with the
// job's one cost model (trained on both tasks' logs) and with a model per task.
class RunJobResume : public ::testing::TestWithParam<const char*> {};

INSTANTIATE_TEST_SUITE_P(CostModels, RunJobResume, ::testing::Values("shared", "per-task"),
                         [](const auto& info) {
                             return std::string(info.param) == "shared" ? "Shared" : "PerTask";
                         });

TEST_P(RunJobResume, FromTheFirstKRoundsProposesRoundKPlusOne) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    fs::path dir = fresh_dir();
    const int per_round = 8, rounds = 6;
    Job job = parse_job(small_job(2, per_round * rounds, per_round));
    job.cost_model = GetParam();
    JobResult full = run_job(job, in(dir / "full"));
    ASSERT_EQ(full.schedule.steps.size(), size_t(rounds));
    auto logs = logs_of(dir / "full");
    std::vector<std::string> names;  // the log of each task index
    for (const JobTaskProgress& t : full.progress.tasks)
        names.push_back(fs::path(t.log_file).filename().string());
    // Round r of the job is the n-th round of its task: its records are those of that round.
    for (int k : {3, 5}) {
        fs::path part = dir / ("k" + std::to_string(k));
        fs::create_directories(part);
        std::map<int, int64_t> task_rounds;  // task -> its rounds among the first k
        for (int s = 0; s < k; ++s) ++task_rounds[full.schedule.steps[s].task];
        for (size_t t = 0; t < names.size(); ++t) {
            std::string text;
            for (const TuningRecord& rec : logs[names[t]])  // the final checks came after
                if (rec.round < task_rounds[static_cast<int>(t)] &&
                    rec.origin != CandidateOrigin::Check)
                    text += record_to_json(rec) + "\n";
            write_file(part / names[t], text);
        }
        Job next = job;
        next.trials = per_round * (k + 1);
        JobResult resumed = run_job(next, in(part));
        ASSERT_EQ(resumed.schedule.steps.size(), 1u);
        const TaskSchedulerStep& step = resumed.schedule.steps[0];
        EXPECT_EQ(step.step, k);
        ASSERT_EQ(step.task, full.schedule.steps[k].task) << "k " << k;
        const std::string& name = names[static_cast<size_t>(step.task)];
        int64_t round = task_rounds[step.task];
        std::vector<std::string> want, got;
        int from_model = 0;  // the model's picks: its training must be the same too
        for (const TuningRecord& rec : trial_records(logs[name]))
            if (rec.round == round) {
                want.push_back(rec.schedule_json);
                from_model += rec.origin != CandidateOrigin::Random;
            }
        EXPECT_GT(from_model, 0) << "k " << k;
        auto resumed_logs = logs_of(part);
        for (const TuningRecord& rec : trial_records(resumed_logs[name]))
            if (rec.round == round) got.push_back(rec.schedule_json);
        EXPECT_EQ(got.size(), size_t(per_round));
        EXPECT_TRUE(got == want) << "round " << k + 1 << " (task " << step.task << ", its round "
                                 << round << ") proposed other candidates after the resume";
    }
}

// A job killed after a round's trials were logged and before its re-measurements were (one
// write per record, so any point between two records): the resumed job re-measures that round's
// fastest first and then goes on as the uninterrupted one, writing exactly its records (the
// simulated worker makes them deterministic; the timestamps aside). Before, a kill there lost
// the round's re-measurements for good: 41 records where the uninterrupted run wrote 43.
TEST(RunJob, AKillBeforeARoundsReMeasurementsResumesToTheUninterruptedRecords) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    fs::path dir = fresh_dir();
    const int per_round = 8, rounds = 5;
    Job job = parse_job(small_job(2, per_round * rounds, per_round));
    job.tuning.measure.simulate_ms = 1;
    JobResult full = run_job(job, in(dir / "full"));
    ASSERT_EQ(full.schedule.steps.size(), size_t(rounds));
    auto logs = logs_of(dir / "full");
    std::vector<std::string> names;
    for (const JobTaskProgress& t : full.progress.tasks)
        names.push_back(fs::path(t.log_file).filename().string());
    auto same = [](std::vector<TuningRecord> a, std::vector<TuningRecord> b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i) {
            a[i].timestamp = b[i].timestamp = 0;
            if (record_to_json(a[i]) != record_to_json(b[i])) return false;
        }
        return true;
    };
    for (int k : {0, 2}) {
        // The first k rounds whole, and the trials of round k (no re-measurement of it).
        fs::path part = dir / ("k" + std::to_string(k));
        fs::create_directories(part);
        std::map<int, int64_t> task_rounds;
        for (int s = 0; s < k; ++s) ++task_rounds[full.schedule.steps[s].task];
        const int cut_task = full.schedule.steps[k].task;
        int remeasures_cut = 0;
        for (size_t t = 0; t < names.size(); ++t) {
            std::string text;
            for (const TuningRecord& rec : logs[names[t]]) {
                bool kept = rec.round < task_rounds[static_cast<int>(t)] ||
                            (static_cast<int>(t) == cut_task &&
                             rec.round == task_rounds[cut_task] && rec.is_trial());
                if (kept) text += record_to_json(rec) + "\n";
                remeasures_cut += static_cast<int>(t) == cut_task &&
                                  rec.round == task_rounds[cut_task] && !rec.is_trial();
            }
            write_file(part / names[t], text);
        }
        ASSERT_GT(remeasures_cut, 0) << "k " << k << ": the round re-measures nothing";
        JobResult resumed = run_job(job, in(part));
        EXPECT_EQ(resumed.progress.trials, full.progress.trials);
        auto resumed_logs = logs_of(part);
        for (const std::string& name : names)
            EXPECT_TRUE(same(resumed_logs[name], logs[name]))
                << "k " << k << ", " << name << ": " << resumed_logs[name].size() << " records, "
                << logs[name].size() << " uninterrupted";
    }
}

// With the job's one model, a task's first round is already chosen by a model (trained on the
// tasks tuned before it); with a model per task it is sampled at random.
TEST(RunJob, TheSharedModelChoosesANewTasksFirstRound) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    fs::path dir = fresh_dir();
    for (const char* kind : {"shared", "per-task"}) {
        Job job = parse_job(small_job(2, 16, 8));
        job.cost_model = kind;
        JobResult r = run_job(job, in(dir / kind));
        ASSERT_EQ(r.schedule.steps.size(), 2u);
        ASSERT_EQ(r.schedule.steps[1].task, 1);  // every task's first round comes first
        auto logs = logs_of(dir / kind);
        std::string second = fs::path(r.progress.tasks[1].log_file).filename().string();
        int by_model = 0;
        for (const TuningRecord& rec : trial_records(logs[second]))
            by_model +=
                rec.origin != CandidateOrigin::Random && rec.origin != CandidateOrigin::Default;
        if (std::string(kind) == "shared")
            EXPECT_GT(by_model, 0) << "the second task's first round was all random";
        else
            EXPECT_EQ(by_model, 0) << "a model of the second task's own chose before it trained";
    }
}

TEST(RunJob, ACrashingOrHangingCandidateCostsThatCandidateOnly) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    fs::path dir = fresh_dir();
    Job job = parse_job(small_job(2, 24, 8));
    job.tuning.measure.run_timeout_seconds = 2;
    JobRunOptions o = in(dir);
    o.measure_runner = std::make_shared<FaultyRunner>(job.tuning.measure);
    JobResult r = run_job(job, o);
    EXPECT_EQ(r.progress.trials, 24);
    std::map<MeasureError, int> errors;
    for (const auto& [name, records] : logs_of(dir))
        for (const TuningRecord& rec : trial_records(records)) ++errors[rec.error];
    EXPECT_EQ(errors[MeasureError::Crash], 2);       // the segfault and the abort
    EXPECT_GE(errors[MeasureError::RunTimeout], 1);  // the hang (a loaded machine may add one)
    EXPECT_EQ(errors[MeasureError::None] + errors[MeasureError::RunTimeout], 22)
        << "another candidate failed";
}
