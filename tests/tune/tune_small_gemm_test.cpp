// Tuning a 64^3 GEMM for two rounds of 8 trials: the log holds one record per trial, the best
// schedule computes the reference's product and is no slower than the first measured candidate,
// the second round's candidates come from the evolutionary search (the model trained after the
// first), and the curve falls monotonically.
#include "auto_schedule/SearchTestUtil.h"
#include "tune/TuneTestUtil.h"

using namespace tessel;
using namespace tessel::testing;

TEST(TuneSmallGemm, FindsACorrectScheduleNoSlowerThanTheFirst) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    SearchTask task = small_gemm_task(64);
    std::string log = fresh_log("gemm");
    TuningResult r = tune(task, small_options(log, 16));

    EXPECT_EQ(r.trials, 16);
    EXPECT_EQ(r.resumed_trials, 0);
    EXPECT_EQ(r.stop_reason, "trials");
    ASSERT_EQ(r.rounds.size(), 2u);
    EXPECT_EQ(r.rounds[0].random, 8);  // the model had no data: random samples
    EXPECT_EQ(r.rounds[0].chosen_by_model, 0);
    EXPECT_EQ(r.rounds[1].chosen_by_model, 8);  // eps-greedy: 0.05 x 8 rounds down to none
    EXPECT_GT(r.rounds[1].search.scored, 0);

    RecordLog read = read_records(log);
    ASSERT_EQ(read.records.size(), 16u);
    EXPECT_EQ(read.skipped, 0);
    std::set<std::string> keys;
    double first = std::numeric_limits<double>::infinity();
    for (const TuningRecord& rec : read.records) {
        EXPECT_EQ(rec.task_key(), task.key());
        keys.insert(state_key(task.apply_record(rec.schedule_json)));
        if (rec.ok() && !std::isfinite(first)) first = rec.mean_cost();
    }
    EXPECT_EQ(keys.size(), 16u) << "a state was measured twice";
    EXPECT_EQ(read.records[0].round, 0);
    EXPECT_EQ(read.records[15].round, 1);
    EXPECT_EQ(read.records[0].origin, CandidateOrigin::Random);
    EXPECT_NE(read.records[15].origin, CandidateOrigin::Random);

    ASSERT_TRUE(r.best_schedule.has_value());
    EXPECT_LE(r.best_seconds, first);
    EXPECT_NEAR(r.best_gflops, 2.0 * 64 * 64 * 64 / r.best_seconds / 1e9, 1e-6);
#ifdef TESSEL_HAVE_LLVM
    expect_jit_matches_reference(*r.best_schedule, 64);
#endif

    ASSERT_EQ(r.curve.size(), 16u);
    for (size_t i = 1; i < r.curve.size(); ++i) {
        EXPECT_EQ(r.curve[i].trial, static_cast<int64_t>(i) + 1);
        EXPECT_LE(r.curve[i].best_seconds, r.curve[i - 1].best_seconds);
    }
    EXPECT_EQ(r.curve.back().best_seconds, r.best_seconds);
}
