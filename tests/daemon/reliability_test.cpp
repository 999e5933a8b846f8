// The daemon's reliability (issue 20): kill -9 at random moments of a real tuning job, and
// hostile logs. CI runs a few kills; TESSEL_DAEMON_LONG=1 runs the long mode (25 kills of a
// larger job), TESSEL_DAEMON_KILLS sets the count.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "daemon/DaemonTestUtil.h"
#include "tessel/auto_schedule/records/Record.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

bool long_mode() {
    const char* v = std::getenv("TESSEL_DAEMON_LONG");
    return v && std::string(v) == "1";
}

int kills() {
    if (const char* v = std::getenv("TESSEL_DAEMON_KILLS")) return std::atoi(v);
    return long_mode() ? 25 : 4;
}

struct LogState {
    int64_t records = 0;
    int64_t skipped = 0;
    bool duplicates = false;
};

LogState read_logs(const fs::path& dir) {
    LogState s;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        if (e.path().extension() != ".jsonl") continue;
        RecordLog log = read_records(e.path().string());
        std::vector<TuningRecord> trials = trial_records(log.records);
        std::set<std::string> keys;
        for (const TuningRecord& r : trials) s.duplicates |= !keys.insert(r.schedule_json).second;
        s.records += static_cast<int64_t>(trials.size());
        s.skipped += log.skipped;
    }
    return s;
}

}  // namespace

// kill -9 of the daemon at random moments: every time, its measurement workers die with it;
// after each restart nothing logged before is lost; at the end every log line is valid, no
// state was measured twice and the trials equal the budget.
TEST(DaemonReliability, KillNineAtRandomMoments) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    fs::path dir = fresh_dir();
    fs::path spool = dir / "spool";
    const int64_t budget = long_mode() ? 800 : 40;
    fs::create_directories(spool / "queue");
    // Timing of 20 ms a candidate: a round takes about a second, so kills land mid-job.
    write_file(spool / "queue" / "k.json", small_job(long_mode() ? 3 : 2, budget, 8, 20));
    // A worker path of this test's own, to find its workers among all processes.
    fs::path worker = dir / "tessel-measure-killtest";
    fs::create_symlink(TESSEL_MEASURE_TOOL, worker);
    std::map<std::string, std::string> env = {{"TESSEL_MEASURE_WORKER", worker.string()}};
    std::mt19937 rng(20261124);
    std::uniform_real_distribution<double> when(0.2, long_mode() ? 3.0 : 1.5);
    int64_t before = 0;
    int killed_while_running = 0;
    for (int k = 0; k < kills(); ++k) {
        Tool d({"daemon", "--spool", spool.string(), "--poll", "0.1"}, dir, "d" + std::to_string(k),
               env);
        std::this_thread::sleep_for(std::chrono::duration<double>(when(rng)));
        if (fs::exists(spool / "done" / "k.json")) {
            d.signal(SIGTERM);
            d.wait_exit(60);
            break;  // finished before this kill
        }
        d.signal(SIGKILL);
        EXPECT_EQ(d.wait_exit(30), 128 + SIGKILL);
        ++killed_while_running;
        // PR_SET_PDEATHSIG: the workers die with the daemon.
        bool gone = false;
        for (int i = 0; i < 100 && !gone; ++i) {
            gone = processes_running(worker.string()).empty();
            if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        EXPECT_TRUE(gone) << "a measurement worker outlived the killed daemon (kill " << k << ")";
        LogState s = read_logs(spool / "logs" / "k");
        EXPECT_LE(s.skipped, 1) << "at most the torn last line of one log";
        EXPECT_GE(s.records, before) << "records were lost (kill " << k << ")";
        EXPECT_FALSE(s.duplicates) << "a state was measured twice (kill " << k << ")";
        before = s.records;
    }
    EXPECT_GE(killed_while_running, std::min(kills(), long_mode() ? 20 : 1));
    ToolRun rest = run_tool({"daemon", "--spool", spool.string(), "--once"}, dir, "rest", env);
    ASSERT_EQ(rest.status, 0) << rest.err;
    ASSERT_TRUE(fs::exists(spool / "done" / "k.json")) << rest.err;
    LogState end = read_logs(spool / "logs" / "k");
    EXPECT_EQ(end.skipped, 0);
    EXPECT_FALSE(end.duplicates);
    EXPECT_EQ(end.records, budget);
    std::cout << killed_while_running << " kills while tuning; " << before
              << " trials logged at the last kill\n";
}

namespace {

// `n` mutations of valid record lines, each of which the reader must skip.
std::vector<std::string> mutated_lines(const std::vector<std::string>& valid, int n) {
    std::mt19937 rng(7);
    auto replace = [](std::string s, const std::string& from, const std::string& to) {
        size_t at = s.find(from);
        return at == std::string::npos ? std::string("{") : s.replace(at, from.size(), to);
    };
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) {
        const std::string& line = valid[static_cast<size_t>(i) % valid.size()];
        switch (i % 12) {
            case 0:  // truncated
                out.push_back(line.substr(0, 1 + rng() % (line.size() - 1)));
                break;
            case 1: out.push_back(replace(line, "\"costs\":[", "\"costs\":[NaN,")); break;
            case 2: out.push_back(replace(line, "\"costs\":[", "\"costs\":[1e999,")); break;
            case 3: out.push_back(replace(line, "\"costs\":[", "\"costs\":[-1.5,")); break;
            case 4:  // wrong type
                out.push_back(replace(line, "\"costs\":[", "\"costs\":\"fast\",\"was\":["));
                break;
            case 5:
                out.push_back(replace(line, "\"format_version\":2", "\"format_version\":99"));
                break;
            case 6:
                out.push_back(
                    replace(line, "\"error_code\":\"none\"", "\"error_code\":\"melted\""));
                break;
            case 7:  // a schedule of another DAG
                out.push_back(replace(line, "\"workload_key\":\"", "\"workload_key\":\"f00d"));
                break;
            case 8:  // deep nesting
                out.push_back("{\"a\":" + std::string(20000 + i, '[') +
                              std::string(20000 + i, ']') + "}");
                break;
            case 9: {  // bytes
                std::string b;
                for (int j = 0; j < 200; ++j) b.push_back(static_cast<char>(1 + rng() % 255));
                for (char& c : b)
                    if (c == '\n') c = ' ';
                out.push_back(b);
                break;
            }
            case 10: out.push_back(i % 24 == 10 ? "[1, 2, 3]" : "\"a string\""); break;
            default:
                out.push_back(
                    replace(line, "\"round\":", "\"round\":99999999999999999999999,\"r\":"));
        }
    }
    // One 10 MB line: a record with a huge error message.
    out.push_back(replace(valid[0], "\"error_message\":\"",
                          "\"error_message\":\"" + std::string(10 << 20, 'x')));
    return out;
}

}  // namespace

// Hostile logs: over a thousand mutated lines (truncated, wrong types, NaN and huge numbers,
// deep nesting, bytes, a 10 MB line) among valid ones are skipped and counted; best, distill and
// a resumed run work on the valid ones; nothing crashes; nothing is written outside the log
// folder and the outputs asked for.
TEST(DaemonReliability, HostileLogLinesAreSkippedWithACount) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    fs::path dir = fresh_dir();
    for (const char* sub : {"cwd", "home", "tmp"}) fs::create_directories(dir / sub);
    std::map<std::string, std::string> env = {{"HOME", (dir / "home").string()},
                                              {"TMPDIR", (dir / "tmp").string()}};
    fs::path logs = dir / "logs";
    write_file(dir / "one.json", small_job(1, 8, 8));
    ToolRun first = run_tool({"run", (dir / "one.json").string(), "--log-dir", logs.string()}, dir,
                             "first", env, dir / "cwd");
    ASSERT_EQ(first.status, 0) << first.err;
    fs::path log;
    for (const auto& e : fs::directory_iterator(logs))
        if (e.path().extension() == ".jsonl") log = e.path();
    std::vector<std::string> valid;
    {
        std::istringstream in(read_file(log));
        for (std::string line; std::getline(in, line);) valid.push_back(line);
    }
    ASSERT_GE(valid.size(), 8u);  // 8 trials and the re-measurements of the fastest
    std::vector<std::string> hostile = mutated_lines(valid, 1200);
    ASSERT_GE(hostile.size(), 1000u);
    {
        std::string text;
        for (size_t i = 0; i < hostile.size(); ++i) {
            text += hostile[i] + "\n";
            if (i == 600) text += valid[0] + "\n";  // a repeated valid line in the middle
        }
        std::ofstream(log, std::ios::app | std::ios::binary) << text;
    }
    RecordLog read = read_records(log.string());
    EXPECT_EQ(read.records.size(), valid.size() + 1);
    EXPECT_EQ(read.skipped, static_cast<int64_t>(hostile.size()));
    EXPECT_GE(read.skip_reasons.size(), 5u);

    ToolRun best = run_tool({"best", logs.string()}, dir, "best", env, dir / "cwd");
    EXPECT_EQ(best.status, 0) << best.err;
    EXPECT_NE(best.err.find("skipped " + std::to_string(hostile.size())), std::string::npos)
        << best.err;
    EXPECT_NE(best.out.find("def apply_schedule"), std::string::npos);
    ToolRun distill =
        run_tool({"distill", logs.string(), "-o", (dir / "cwd" / "best.jsonl").string()}, dir,
                 "distill", env, dir / "cwd");
    EXPECT_EQ(distill.status, 0) << distill.err;
    // The records of one schedule (the repeated line may be of the best one).
    std::set<std::string> distilled;
    for (const TuningRecord& r : read_records((dir / "cwd" / "best.jsonl").string()).records)
        distilled.insert(r.schedule_json);
    EXPECT_EQ(distilled.size(), 1u);
    // A run resumes from the valid lines and appends after the hostile ones.
    write_file(dir / "one.json", small_job(1, 16, 8));
    ToolRun more = run_tool({"run", (dir / "one.json").string(), "--log-dir", logs.string()}, dir,
                            "more", env, dir / "cwd");
    EXPECT_EQ(more.status, 0) << more.err;
    RecordLog after = read_records(log.string());
    EXPECT_EQ(after.skipped, static_cast<int64_t>(hostile.size()));
    EXPECT_EQ(trial_records(after.records).size(), 16u);  // the budget; the repeated line counts

    // Nothing outside the log folder and the output asked for.
    EXPECT_TRUE(fs::is_empty(dir / "home"));
    EXPECT_TRUE(fs::is_empty(dir / "tmp"));
    std::vector<std::string> in_cwd;
    for (const auto& e : fs::directory_iterator(dir / "cwd")) in_cwd.push_back(e.path().filename());
    EXPECT_EQ(in_cwd, std::vector<std::string>{"best.jsonl"});
}
