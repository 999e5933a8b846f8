// The progress output on a non-terminal: a header line, one plain line per round with the trials,
// the best GFLOP/s and the round's time split, a closing line on stderr; the best schedule as a
// Python script on stdout. format_progress alone, on made-up figures.
#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
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
    // The best timed again at the end, the search's figure beside it.
    EXPECT_NE(out.find(", timed again at the end (the search's timings: "), std::string::npos)
        << out;
    EXPECT_NE(err.find(", timed again at the end (the search's timings: "), std::string::npos)
        << err;
}

// At the end the log's best is measured final_measurements times more, and not logged: with
// simulated timings its figure is the schedule's own simulated cost, which every measurement of
// it gives; 0 measurements, or a stop, leave it untimed.
TEST(TuneProgress, TheBestIsTimedAgainAtTheEndAndNotLogged) {
    if (!CostModel::available()) GTEST_SKIP() << "the tuner's cost model needs XGBoost";
    SearchTask task = small_gemm_task(32);
    std::string log = fresh_log("final");
    TuningOptions o = small_options(log, 8, 4);
    o.measure.simulate_ms = 0.1;
    TuningResult r = tune(task, o);
    ASSERT_TRUE(r.best_schedule.has_value());
    EXPECT_EQ(r.final_seconds, simulated_cost(*r.best_schedule));
    EXPECT_EQ(r.final_seconds, r.best_seconds);
    EXPECT_DOUBLE_EQ(r.final_gflops, 2.0 * 32 * 32 * 32 / r.final_seconds / 1e9);
    size_t measured = 0;
    for (const TuningRound& round : r.rounds) measured += round.measured + round.remeasured;
    EXPECT_EQ(read_records(log).records.size(), measured);  // nothing more in the log

    TuningOptions none = small_options(fresh_log("none"), 8, 4);
    none.measure.simulate_ms = 0.1;
    none.final_measurements = 0;
    TuningResult untimed = tune(task, none);
    EXPECT_TRUE(std::isinf(untimed.final_seconds));
    EXPECT_EQ(untimed.final_gflops, 0);
    EXPECT_EQ(untimed.best_seconds, r.best_seconds);  // the same search, the same log
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
