// Resuming from the log: a second tune() with more trials counts the log's records as trials
// done, continues the round numbers, measures only the missing trials and none of the states in
// the log again; a tune() whose trials are all in the log measures nothing.
#include <set>

#include "tune/TuneTestUtil.h"

using namespace tessel;
using namespace tessel::testing;

TEST(TuneResume, ContinuesTheTrialCountAndMeasuresNothingTwice) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    SearchTask task = small_gemm_task(64);
    std::string log = fresh_log("resume");
    TuningResult first = tune(task, small_options(log, 8));
    ASSERT_EQ(first.trials, 8);

    TuningResult second = tune(task, small_options(log, 16));
    EXPECT_EQ(second.resumed_trials, 8);
    EXPECT_EQ(second.trials, 16);
    ASSERT_EQ(second.rounds.size(), 1u);
    EXPECT_EQ(second.rounds[0].round, 1);  // the round after the log's last
    EXPECT_EQ(second.rounds[0].measured, 8);
    EXPECT_EQ(second.curve.size(), 16u);
    ScheduleCosts costs;  // the best is the log's, re-measurements included
    for (const TuningRecord& rec : read_records(log).records) costs.add(rec);
    ASSERT_TRUE(costs.best().has_value());
    EXPECT_EQ(second.best_seconds, costs.best()->seconds);

    std::vector<TuningRecord> trials = trial_records(read_records(log).records);
    ASSERT_EQ(trials.size(), 16u);
    std::set<std::string> keys;
    for (const TuningRecord& rec : trials)
        keys.insert(state_key(task.apply_record(rec.schedule_json)));
    EXPECT_EQ(keys.size(), 16u) << "a state in the log was measured again";
    for (size_t i = 0; i < 16; ++i) EXPECT_EQ(trials[i].round, i < 8 ? 0 : 1);

    TuningResult done = tune(task, small_options(log, 16));
    EXPECT_EQ(done.resumed_trials, 16);
    EXPECT_TRUE(done.rounds.empty());
    EXPECT_EQ(done.stop_reason, "trials");
    EXPECT_EQ(done.best_seconds, second.best_seconds);
    EXPECT_EQ(trial_records(read_records(log).records).size(), 16u);
}

// A torn last line (a tuner killed in the middle of a write) is skipped and cut off; the trials
// before it count.
TEST(TuneResume, ATornLastLineIsCutOff) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    SearchTask task = small_gemm_task(32);
    std::string log = fresh_log("torn");
    tune(task, small_options(log, 4, 4));
    {
        std::FILE* f = std::fopen(log.c_str(), "ab");
        std::fputs("{\"format_version\":2,\"task\":{\"dag_ha", f);
        std::fclose(f);
    }
    TuningResult r = tune(task, small_options(log, 8, 4));
    EXPECT_EQ(r.resumed_trials, 4);
    EXPECT_EQ(r.trials, 8);
    RecordLog read = read_records(log);
    EXPECT_EQ(trial_records(read.records).size(), 8u);
    EXPECT_EQ(read.skipped, 0);
}

// Early stopping counts the trials since the best one, the log's included: resumed with a budget
// of one trial without improvement, the tuning stops at the first round that does not improve.
TEST(TuneResume, EarlyStoppingCountsTrialsSinceTheBest) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    SearchTask task = small_gemm_task(32);
    std::string log = fresh_log("early");
    tune(task, small_options(log, 8, 4));
    TuningOptions o = small_options(log, 24, 4);
    o.early_stopping = 1;
    TuningResult r = tune(task, o);
    EXPECT_EQ(r.stop_reason, "early_stopping");
    EXPECT_LT(r.trials, 24);
    // The last trial did not improve the best time: it is no faster than the best of the records
    // before it (re-measurements move the best, but are not trials).
    std::vector<TuningRecord> records = read_records(log).records;
    size_t last = records.size() - 1;
    while (!records[last].is_trial()) --last;
    ScheduleCosts before;
    for (size_t i = 0; i < last; ++i) before.add(records[i]);
    ASSERT_TRUE(before.best().has_value());
    EXPECT_GE(records[last].mean_cost(), before.best()->seconds);
}

// A search space smaller than the trials asked for: the tuning measures every state once and
// stops, saying the search is exhausted; resumed, it measures nothing.
TEST(TuneResume, ASpaceMeasuredOutIsExhausted) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    SearchTask task = small_gemm_task(1);  // one legal state
    std::string log = fresh_log("exhausted");
    TuningResult r = tune(task, small_options(log, 100, 8));
    EXPECT_EQ(r.stop_reason, "exhausted");
    EXPECT_EQ(r.trials, 1);
    TuningResult again = tune(task, small_options(log, 100, 8));
    EXPECT_EQ(again.stop_reason, "exhausted");
    EXPECT_EQ(again.trials, 1);
    EXPECT_EQ(trial_records(read_records(log).records).size(), 1u);
}
