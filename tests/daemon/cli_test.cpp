// tessel-tune as a Unix program (tools/tessel-tune), run as a subprocess: usage and exit
// statuses, a job refused before any work, run and its results (best, distill), the daemon's
// spool, SIGTERM, two daemons on one spool.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "daemon/DaemonTestUtil.h"
#include "tessel/auto_schedule/records/Record.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

// Waits until `pred` holds (polling), at most `seconds`.
template <typename Pred>
bool eventually(Pred pred, double seconds = 60) {
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
        if (pred()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return pred();
}

nlohmann::json status_of(const fs::path& spool) {
    nlohmann::json j = nlohmann::json::parse(read_file(spool / "status.json"), nullptr, false);
    return j.is_discarded() ? nlohmann::json::object() : j;
}

int64_t status_trials(const fs::path& spool) {
    nlohmann::json s = status_of(spool);
    return s.contains("job") ? s["job"].value("trials", int64_t(0)) : 0;
}

}  // namespace

TEST(TesselTuneCli, UsageAndHelp) {
    fs::path dir = fresh_dir();
    ToolRun none = run_tool({}, dir, "none");
    EXPECT_EQ(none.status, 64) << none.err;
    ToolRun help = run_tool({"--help"}, dir, "help");
    EXPECT_EQ(help.status, 0);
    for (const char* cmd : {"run", "daemon", "submit", "status", "best", "distill", "plot"}) {
        EXPECT_NE(help.out.find(cmd), std::string::npos) << cmd;
        ToolRun h = run_tool({cmd, "--help"}, dir, std::string("help_") + cmd);
        EXPECT_EQ(h.status, 0) << cmd;
        EXPECT_NE(h.out.find("Usage:"), std::string::npos) << cmd;
    }
    EXPECT_EQ(run_tool({"frobnicate"}, dir, "bad").status, 64);
    EXPECT_EQ(run_tool({"best"}, dir, "nolog").status, 64);
    EXPECT_EQ(run_tool({"daemon", "--poll", "-1"}, dir, "poll").status, 64);
    ToolRun missing = run_tool({"run", (dir / "nope.json").string()}, dir, "missing");
    EXPECT_EQ(missing.status, 66);
    EXPECT_NE(missing.err.find("nope.json"), std::string::npos);
}

TEST(TesselTuneCli, AnInvalidJobIsRefusedWithEveryProblemBeforeAnyWork) {
    fs::path dir = fresh_dir();
    write_file(dir / "bad.json", R"({"format_version": 1, "target": "llvm -num-cores=x",
        "trials": -3, "tasks": [{"workload": "op.nope", "params": []},
        {"workload": "matmul", "params": [4, 4, "float32"]}]})");
    ToolRun r = run_tool({"run", (dir / "bad.json").string(), "--log-dir", (dir / "logs").string()},
                         dir, "run");
    EXPECT_EQ(r.status, 65);
    EXPECT_NE(r.err.find("4 problems"), std::string::npos) << r.err;
    for (const char* needle : {"target", "trials", "op.nope", "tasks[1]"})
        EXPECT_NE(r.err.find(needle), std::string::npos) << needle;
    EXPECT_FALSE(fs::exists(dir / "logs"));  // nothing was started
    ToolRun s =
        run_tool({"submit", (dir / "bad.json").string(), "--spool", (dir / "spool").string()}, dir,
                 "submit");
    EXPECT_EQ(s.status, 65);
    EXPECT_FALSE(fs::exists(dir / "spool" / "queue" / "bad.json"));
}

TEST(TesselTuneCli, RunTakesTheJobsTuningFieldsAsFlags) {
    fs::path dir = fresh_dir();
    ToolRun help = run_tool({"run", "--help"}, dir, "help");
    for (const char* flag :
         {"--seed", "--measurements-per-round", "--population", "--restart-after", "--min-programs",
          "--number", "--min-repeat-ms", "--build-timeout", "--search-ahead"})
        EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
    // A value outside the field's range, or of the wrong kind, is a usage error.
    write_file(dir / "j.json", small_job(1, 8));
    std::string job = (dir / "j.json").string();
    EXPECT_EQ(run_tool({"run", job, "--population", "0"}, dir, "zero").status, 64);
    EXPECT_EQ(run_tool({"run", job, "--population", "8.5"}, dir, "frac").status, 64);
    EXPECT_EQ(run_tool({"run", job, "--measure-default", "maybe"}, dir, "flag").status, 64);
    EXPECT_EQ(run_tool({"run", job, "--search-ahead", "yes"}, dir, "ahead").status, 64);
    // A flag overrides the file: a job refused for its population runs with a good one.
    std::string text = small_job(1, 8);
    const std::string good = "\"population\": 64";
    text.replace(text.find(good), good.size(), "\"population\": 0");
    write_file(dir / "bad_population.json", text);
    std::string bad = (dir / "bad_population.json").string();
    ToolRun refused = run_tool({"run", bad, "--log-dir", (dir / "a").string()}, dir, "refused");
    EXPECT_EQ(refused.status, 65);
    EXPECT_NE(refused.err.find("search.population"), std::string::npos) << refused.err;
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    ToolRun ran =
        run_tool({"run", bad, "--log-dir", (dir / "b").string(), "--population", "16"}, dir, "ran");
    EXPECT_EQ(ran.status, 0) << ran.err;
    EXPECT_NE(ran.err.find("8/8 trials"), std::string::npos) << ran.err;
}

TEST(TesselTuneCli, RunTunesAJobAndBestAndDistillReadItsLogs) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    fs::path dir = fresh_dir();
    write_file(dir / "two.json", small_job(2, 24, 8));
    fs::create_directories(dir / "cwd");
    ToolRun r = run_tool({"run", (dir / "two.json").string()}, dir, "run", {}, dir / "cwd");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("weighted latency"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("24/24 trials"), std::string::npos) << r.err;
    fs::path logs = dir / "cwd" / "tuning_logs" / "two";  // the default log folder
    ASSERT_TRUE(fs::is_directory(logs));

    ToolRun best = run_tool({"best", logs.string(), "--task", "16,16,16"}, dir, "best");
    ASSERT_EQ(best.status, 0) << best.err;
    EXPECT_NE(best.out.find("def apply_schedule(s):"), std::string::npos) << best.out;
    EXPECT_NE(best.out.find("# task: [\"matmul\",16,16,16"), std::string::npos);
    ToolRun ambiguous = run_tool({"best", logs.string(), "--task", "matmul"}, dir, "ambiguous");
    EXPECT_EQ(ambiguous.status, 65);
    EXPECT_NE(ambiguous.err.find("several tasks"), std::string::npos);

    // A failed re-measurement of each task's best schedule (a worker stopped with its job, as
    // `timeout` does to a run): distill leaves it out.
    for (const auto& e : fs::directory_iterator(logs)) {
        if (e.path().extension() != ".jsonl") continue;
        std::vector<TuningRecord> records = read_records(e.path().string()).records;
        ScheduleCosts costs;
        for (const TuningRecord& rec : records) costs.add(rec);
        ASSERT_TRUE(costs.best().has_value()) << e.path();
        TuningRecord failed = records[costs.best()->record];
        failed.origin = CandidateOrigin::Remeasure;
        failed.error = MeasureError::Crash;
        failed.error_message = "the worker died of SIGTERM during timing";
        failed.costs.clear();
        std::ofstream(e.path(), std::ios::app) << record_to_json(failed) << "\n";
    }
    ToolRun d =
        run_tool({"distill", logs.string(), "-o", (dir / "best.jsonl").string()}, dir, "distill");
    ASSERT_EQ(d.status, 0) << d.err;
    // Per task, the records of its best schedule: its trial and its successful re-measurements.
    RecordLog distilled = read_records((dir / "best.jsonl").string());
    for (const TuningRecord& rec : distilled.records) EXPECT_TRUE(rec.ok()) << rec.error_message;
    std::map<std::string, std::set<std::string>> schedules;  // task -> its schedules
    for (const TuningRecord& rec : distilled.records)
        schedules[rec.task_key()].insert(rec.schedule_json);
    EXPECT_EQ(schedules.size(), 2u);
    for (const auto& [task, s] : schedules) EXPECT_EQ(s.size(), 1u) << task;
    EXPECT_EQ(trial_records(distilled.records).size(), 2u);

    // Run again: the logs say the budget is spent; nothing is measured.
    ToolRun again = run_tool({"run", (dir / "two.json").string()}, dir, "again", {}, dir / "cwd");
    EXPECT_EQ(again.status, 0);
    EXPECT_NE(again.err.find("resuming after 24"), std::string::npos) << again.err;
    size_t lines = 0;
    for (const auto& e : fs::directory_iterator(logs))
        if (e.path().extension() == ".jsonl")
            lines += trial_records(read_records(e.path().string()).records).size();
    EXPECT_EQ(lines, 24u);
}

TEST(TesselTuneCli, TheDaemonTunesTheQueueAndASecondDaemonRefusesNamingTheFirst) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    fs::path dir = fresh_dir();
    fs::path spool = dir / "spool";
    write_file(dir / "job1.json", small_job(2, 16, 8));
    ASSERT_EQ(
        run_tool({"submit", (dir / "job1.json").string(), "--spool", spool.string()}, dir, "submit")
            .status,
        0);
    write_file(spool / "queue" / "broken.json", "{\"format_version\": 1,");
    Tool first({"daemon", "--spool", spool.string(), "--poll", "0.1"}, dir, "first");
    ASSERT_TRUE(eventually([&] { return fs::exists(dir / "spool" / "status.json"); }));
    ToolRun second = run_tool({"daemon", "--spool", spool.string()}, dir, "second");
    EXPECT_EQ(second.status, 69);
    EXPECT_NE(second.err.find("process " + std::to_string(first.pid())), std::string::npos)
        << second.err;
    ASSERT_TRUE(eventually([&] { return fs::exists(spool / "done" / "job1.json"); }, 120))
        << first.err();
    EXPECT_TRUE(fs::exists(spool / "failed" / "broken.json"));
    EXPECT_NE(read_file(spool / "failed" / "broken.reason").find("not JSON"), std::string::npos);
    ToolRun status = run_tool({"status", spool.string()}, dir, "status");
    EXPECT_EQ(status.status, 0);
    EXPECT_NE(status.out.find("daemon running (pid " + std::to_string(first.pid())),
              std::string::npos)
        << status.out;
    EXPECT_NE(status.out.find("done: job1.json, 16 trials"), std::string::npos) << status.out;
    EXPECT_NE(status.out.find("failed: broken.json"), std::string::npos);
    first.signal(SIGTERM);
    EXPECT_EQ(first.wait_exit(60), 0) << first.err();
    EXPECT_EQ(status_of(spool).value("state", std::string()), "stopped");
}

// SIGTERM in the middle of a job: the daemon stops after the batch being measured, leaves the job
// in running/ with valid logs, and the next daemon finishes it from them.
TEST(TesselTuneCli, SigtermStopsCleanlyAndTheNextDaemonFinishesTheJob) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    fs::path dir = fresh_dir();
    fs::path spool = dir / "spool";
    fs::create_directories(spool / "queue");
    write_file(spool / "queue" / "j.json", small_job(2, 40, 8));
    Tool d({"daemon", "--spool", spool.string(), "--poll", "0.1"}, dir, "d");
    ASSERT_TRUE(eventually([&] { return status_trials(spool) >= 8; })) << d.err();
    d.signal(SIGTERM);
    EXPECT_EQ(d.wait_exit(120), 0) << d.err();
    EXPECT_TRUE(fs::exists(spool / "running" / "j.json"));
    EXPECT_EQ(status_of(spool).value("state", std::string()), "stopped");
    int64_t logged = 0;
    for (const auto& e : fs::directory_iterator(spool / "logs" / "j"))
        if (e.path().extension() == ".jsonl") {
            RecordLog log = read_records(e.path().string());
            EXPECT_EQ(log.skipped, 0);
            logged += static_cast<int64_t>(trial_records(log.records).size());
        }
    EXPECT_LT(logged, 40);
    ToolRun rest = run_tool({"daemon", "--spool", spool.string(), "--once"}, dir, "rest");
    EXPECT_EQ(rest.status, 0) << rest.err;
    EXPECT_TRUE(fs::exists(spool / "done" / "j.json"));
    nlohmann::json result = nlohmann::json::parse(read_file(spool / "done" / "j.result.json"));
    EXPECT_EQ(result.value("trials", int64_t(0)), 40);
    EXPECT_EQ(result.value("resumed_trials", int64_t(0)), logged);
}

// Ctrl-C in the middle of `run`: the batch being measured is written, the status is 128 + SIGINT,
// the logs are valid, and the next run finishes the job from them.
TEST(TesselTuneCli, SigintStopsRunCleanly) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    fs::path dir = fresh_dir();
    write_file(dir / "j.json", small_job(2, 96, 8, 20));
    fs::path logs = dir / "logs";
    Tool run({"run", (dir / "j.json").string(), "--log-dir", logs.string()}, dir, "run");
    ASSERT_TRUE(eventually([&] { return run.err().find("8/96 trials") != std::string::npos; }))
        << run.err();
    run.signal(SIGINT);
    EXPECT_EQ(run.wait_exit(120), 128 + SIGINT) << run.err();
    EXPECT_NE(run.err().find("stopping after the batch"), std::string::npos);
    int64_t logged = 0;
    for (const auto& e : fs::directory_iterator(logs))
        if (e.path().extension() == ".jsonl") {
            RecordLog log = read_records(e.path().string());
            EXPECT_EQ(log.skipped, 0);
            logged += static_cast<int64_t>(trial_records(log.records).size());
        }
    EXPECT_GE(logged, 8);
    EXPECT_EQ(logged % 8, 0) << "a batch was cut";
    ToolRun rest =
        run_tool({"run", (dir / "j.json").string(), "--log-dir", logs.string()}, dir, "rest");
    EXPECT_EQ(rest.status, 0) << rest.err;
    EXPECT_NE(rest.err.find("resuming after " + std::to_string(logged)), std::string::npos);
    EXPECT_NE(rest.err.find("96/96 trials"), std::string::npos);
}
