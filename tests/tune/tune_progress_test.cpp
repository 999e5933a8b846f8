// The progress output on a non-terminal: a header line, one plain line per round with the trials,
// the best GFLOP/s and the round's time split, a closing line on stderr; the best schedule as a
// Python script on stdout. format_progress alone, on made-up figures.
#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "tune/TuneTestUtil.h"

using namespace tessel;
using namespace tessel::testing;

TEST(TuneProgress, FormatProgressNamesTrialsBestSplitAndEta) {
    TuningProgress p;
    p.task = "matmul";
    p.trials = 128;
    p.trials_total = 1000;
    p.best_seconds = 2e-3;
    p.best_gflops = 1.5;
    p.elapsed_seconds = 75;
    p.eta_seconds = 3600 + 120;
    TuningRound r;
    r.round = 1;
    r.search_seconds = 3.14;
    r.build_seconds = 2;
    r.run_seconds = 8.25;
    r.train_seconds = 0.4;
    r.errors = 2;
    p.last_round = r;
    EXPECT_EQ(format_progress(p),
              "matmul: 128/1000 trials, best 1.50 GFLOP/s (2.000 ms) | round 1: search 3.1 s, "
              "build 2.0 s, run 8.2 s, train 0.4 s, 2 failed | 1m15s elapsed, ETA 1h02m");
    p.best_seconds = std::numeric_limits<double>::infinity();
    p.last_round.reset();
    p.trials = p.trials_total;
    EXPECT_EQ(format_progress(p),
              "matmul: 1000/1000 trials, best no valid schedule yet | 1m15s "
              "elapsed");
}

TEST(TuneProgress, PlainLinesOffATerminalAndTheScriptAtTheEnd) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    SearchTask task = small_gemm_task(32);
    TuningOptions o = small_options(fresh_log("progress"), 8, 4);
    o.verbose = 1;
    std::vector<int64_t> seen;
    o.on_progress = [&](const TuningProgress& p) { seen.push_back(p.trials); };
    ::testing::internal::CaptureStderr();
    ::testing::internal::CaptureStdout();
    TuningResult r = tune(task, o);
    std::string out = ::testing::internal::GetCapturedStdout();
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(seen, (std::vector<int64_t>{0, 4, 8}));  // at the start and after each round
    EXPECT_EQ(err.find('\r'), std::string::npos) << err;
    EXPECT_NE(err.find("matmul: 4/8 trials, best "), std::string::npos) << err;
    EXPECT_NE(err.find("matmul: 8/8 trials, best "), std::string::npos) << err;
    EXPECT_NE(err.find("GFLOP/s"), std::string::npos) << err;
    EXPECT_NE(err.find("| round 1: search "), std::string::npos) << err;
    EXPECT_NE(err.find("8 trials (trials)"), std::string::npos) << err;
    ASSERT_TRUE(r.best_schedule.has_value());
    EXPECT_NE(out.find(r.best_schedule->to_python()), std::string::npos) << out;
    EXPECT_EQ(out.rfind("# best of 8 trials: ", 0), 0u) << out;
    // The final check's figure, the search's beside it.
    EXPECT_NE(out.find(" in the final check ("), std::string::npos) << out;
    EXPECT_NE(out.find("the search's timings of its best: "), std::string::npos) << out;
    EXPECT_NE(err.find(" in the final check ("), std::string::npos) << err;
}

// At the end the final check times the fastest states and the default side by side,
// final_measurements times each, and logs it: with simulated timings (a schedule's own
// simulated cost, every time) it agrees with the search; 0 measurements leave no check.
TEST(TuneProgress, TheFinalCheckIsLoggedAndAgreesWithSteadyTimings) {
    if (!CostModel::available()) GTEST_SKIP() << "the tuner's cost model needs XGBoost";
    SearchTask task = small_gemm_task(32);
    std::string log = fresh_log("final");
    TuningOptions o = small_options(log, 8, 4);
    o.measure.simulate_ms = 0.1;
    TuningResult r = tune(task, o);
    ASSERT_TRUE(r.best_schedule.has_value());
    EXPECT_EQ(r.final_seconds, simulated_cost(*r.best_schedule));
    EXPECT_EQ(r.final_seconds, r.best_seconds);
    EXPECT_EQ(r.search_best_seconds, r.best_seconds);
    EXPECT_DOUBLE_EQ(r.final_gflops, 2.0 * 32 * 32 * 32 / r.final_seconds / 1e9);
    std::vector<TuningRecord> records = read_records(log).records;
    ASSERT_EQ(records[0].origin, CandidateOrigin::Default);
    EXPECT_EQ(r.default_seconds, simulated_cost(task.apply_record(records[0].schedule_json)));
    EXPECT_EQ(r.best_is_default, r.best_seconds == r.default_seconds);
    size_t measured = 0, checks = 0;
    for (const TuningRound& round : r.rounds) measured += round.measured + round.remeasured;
    for (const TuningRecord& rec : records) checks += rec.origin == CandidateOrigin::Check;
    EXPECT_EQ(records.size(), measured + checks);
    EXPECT_GE(checks, 3u * 3);  // the 3 fastest (the default among them or beside them)
    EXPECT_LE(checks, 3u * 4);
    EXPECT_EQ(checks % 3, 0u);

    TuningOptions none = small_options(fresh_log("none"), 8, 4);
    none.measure.simulate_ms = 0.1;
    none.final_measurements = 0;
    TuningResult unchecked = tune(task, none);
    EXPECT_TRUE(std::isinf(unchecked.final_seconds));
    EXPECT_TRUE(std::isinf(unchecked.default_seconds));
    EXPECT_EQ(unchecked.final_gflops, 0);
    EXPECT_EQ(unchecked.best_seconds, r.best_seconds);  // the same search, the same best
    for (const TuningRecord& rec : read_records(none.log_file).records)
        EXPECT_NE(rec.origin, CandidateOrigin::Check);
}

// A best whose one timing fell in a lucky moment (a log whose slowest tuned schedule reads
// a thousand times fast) loses the final check to the default, which then is the log's best for
// every reader (ScheduleCosts); resumed with nothing new, the tuning does not check again.
TEST(TuneProgress, ALuckyBestLosesTheFinalCheckToTheDefault) {
    if (!CostModel::available()) GTEST_SKIP() << "the tuner's cost model needs XGBoost";
    SearchTask task = small_gemm_task(32);
    std::string log = fresh_log("lucky");
    TuningOptions first = small_options(log, 8, 4);
    first.measure.simulate_ms = 0.1;
    first.remeasure_top = 0;  // one record per trial
    first.final_measurements = 0;
    tune(task, first);
    std::vector<TuningRecord> records = read_records(log).records;
    ASSERT_EQ(records.size(), 8u);
    ASSERT_EQ(records[0].origin, CandidateOrigin::Default);
    auto true_cost = [&](const TuningRecord& rec) {
        return simulated_cost(task.apply_record(rec.schedule_json));
    };
    size_t lucky = 1;
    for (size_t i = 2; i < records.size(); ++i)
        if (true_cost(records[i]) > true_cost(records[lucky])) lucky = i;
    ASSERT_GT(true_cost(records[lucky]), true_cost(records[0]));
    records[lucky].costs = {true_cost(records[lucky]) / 1000};
    {
        std::ofstream out(log, std::ios::trunc);
        for (const TuningRecord& rec : records) out << record_to_json(rec) << "\n";
    }

    TuningOptions check = small_options(log, 8, 4);
    check.measure.simulate_ms = 0.1;
    check.remeasure_top = 1;    // the check: the lucky best and the default
    check.remeasure_limit = 1;  // no re-measurement on the resume
    TuningResult r = tune(task, check);
    EXPECT_EQ(r.search_best_seconds, true_cost(records[lucky]) / 1000);
    EXPECT_TRUE(r.best_is_default);
    EXPECT_EQ(r.best_seconds, true_cost(records[0]));
    EXPECT_EQ(r.final_seconds, r.best_seconds);
    EXPECT_EQ(r.default_seconds, r.best_seconds);
    ASSERT_TRUE(r.best_schedule.has_value());
    EXPECT_EQ(state_key(*r.best_schedule), state_key(task.apply_record(records[0].schedule_json)));
    std::vector<TuningRecord> after = read_records(log).records;
    ASSERT_EQ(after.size(), 8u + 2 * 3);
    for (size_t i = 8; i < after.size(); ++i) {
        EXPECT_EQ(after[i].origin, CandidateOrigin::Check);
        EXPECT_EQ(after[i].round, records.back().round);
        EXPECT_EQ(after[i].schedule_json, records[i % 2 ? 0 : lucky].schedule_json);  // in turns
    }
    ScheduleCosts costs;
    for (const TuningRecord& rec : after) costs.add(rec);
    ASSERT_TRUE(costs.best().has_value());
    EXPECT_EQ(costs.best()->record, 0u);  // the default's trial
    EXPECT_TRUE(costs.behind_check(records[1 == lucky ? 2 : 1]));

    TuningResult again = tune(task, check);
    EXPECT_EQ(read_records(log).records.size(), after.size());
    EXPECT_TRUE(again.best_is_default);
    EXPECT_EQ(again.final_seconds, r.final_seconds);
    EXPECT_EQ(again.search_best_seconds, r.search_best_seconds);  // the checks left out
}

// should_stop stops between rounds; what was measured stays in the log.
TEST(TuneProgress, ShouldStopStopsAfterTheRound) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    SearchTask task = small_gemm_task(32);
    std::string log = fresh_log("stop");
    TuningOptions o = small_options(log, 100, 4);
    int64_t done = 0;
    o.on_progress = [&](const TuningProgress& p) { done = p.trials; };
    o.should_stop = [&] { return done >= 4; };
    TuningResult r = tune(task, o);
    EXPECT_EQ(r.stop_reason, "stopped");
    EXPECT_EQ(r.trials, 4);
    EXPECT_TRUE(std::isinf(r.final_seconds));  // a stop is not kept waiting for a timing
    EXPECT_EQ(trial_records(read_records(log).records).size(), 4u);
}

// On a terminal the progress line is refreshed in place: each round's line starts with a carriage
// return and an erase-line code, and the line ends with a newline only when the tuning finishes.
TEST(TuneProgress, RefreshedLineOnATerminal) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    ASSERT_GE(master, 0);
    ASSERT_EQ(grantpt(master), 0);
    ASSERT_EQ(unlockpt(master), 0);
    int terminal = open(ptsname(master), O_RDWR | O_NOCTTY);
    ASSERT_GE(terminal, 0);
    termios raw{};
    tcgetattr(terminal, &raw);
    cfmakeraw(&raw);  // no newline translation
    tcsetattr(terminal, TCSANOW, &raw);
    int saved = dup(STDERR_FILENO);
    std::fflush(stderr);
    dup2(terminal, STDERR_FILENO);
    TuningOptions o = small_options(fresh_log("tty"), 8, 4);
    o.verbose = 1;
    ::testing::internal::CaptureStdout();
    tune(small_gemm_task(32), o);
    ::testing::internal::GetCapturedStdout();
    std::cerr << std::flush;
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(terminal);
    std::string out;
    char buf[4096];
    // Until the terminal side is closed (EIO) or quiet; a worker process still holding it must
    // not hang the test.
    pollfd ready{master, POLLIN, 0};
    while (poll(&ready, 1, 500) > 0) {
        ssize_t n = read(master, buf, sizeof buf);
        if (n <= 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    close(master);
    size_t first = out.find("\r\033[Kmatmul: 8/8 trials");
    EXPECT_NE(first, std::string::npos) << out;
    EXPECT_EQ(out.find("matmul: 4/8 trials"), out.find('\n') + 1) << out;  // after the header
    EXPECT_EQ(out.find('\n', out.find("matmul: 4/8")), out.find("tune matmul: 8 trials (") - 1)
        << "one newline, before the closing line: " << out;
}
