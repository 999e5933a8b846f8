// Restarts (TuningOptions::restart_after): a new epoch begins after the round in which the
// epoch's best has gone restart_after trials without a 1 % gain; the epoch's first round is
// random again (the model forgot the task's programs), no state is measured twice, and a tuning
// resumed from the first k rounds of a log has the same epochs and proposes that log's round k.
#include <map>
#include <set>

#include "tune/TuneTestUtil.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

// The rule, from the log alone: rounds in log order; a trial that runs 1 % faster than the
// epoch's last gain is a gain; after a round, restart_after trials since the last gain start a
// new epoch. Returns each round's epoch and whether one began after it.
struct EpochOfRound {
    int64_t epoch;
    bool restarted;
};
std::map<int64_t, EpochOfRound> epochs_from_log(const std::vector<TuningRecord>& records,
                                                int64_t restart_after) {
    std::map<int64_t, EpochOfRound> out;
    ScheduleCosts costs;
    int64_t epoch = 0, trials = 0, last_gain = 0;
    double base = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < records.size(); ++i) {
        const TuningRecord& r = records[i];
        double seconds = costs.add(r);
        if (r.is_trial()) {
            ++trials;
            if (r.ok() && seconds < base * 0.99) {
                base = seconds;
                last_gain = trials;
            }
        }
        bool round_ends = i + 1 == records.size() || records[i + 1].round != r.round;
        if (!round_ends) continue;
        bool restart = trials - last_gain >= restart_after;
        out[r.round] = {epoch, restart};
        if (restart) {
            ++epoch;
            base = std::numeric_limits<double>::infinity();
            last_gain = trials;
        }
    }
    return out;
}

TuningOptions restart_options(const std::string& log, int64_t trials) {
    TuningOptions o = small_options(log, trials, 8);
    o.restart_after = 4;  // a round whose last four trials do not gain ends its epoch
    o.measure_default = false;
    // Simulated costs (deterministic, from each candidate's steps): which rounds stall and which
    // the model chooses is the tuner's logic, not a loaded CI machine's timing noise (a run
    // there once chose no round by the model after a round that did not restart).
    o.measure.simulate_ms = 1;
    return o;
}

}  // namespace

TEST(TuneRestart, AStalledEpochRestartsWithARandomRound) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    SearchTask task = small_gemm_task(64);
    std::string log = fresh_log("restart");
    TuningResult r = tune(task, restart_options(log, 64));
    ASSERT_EQ(r.trials, 64);
    std::vector<TuningRecord> records = read_records(log).records;
    std::map<int64_t, EpochOfRound> want = epochs_from_log(records, 4);
    ASSERT_EQ(r.rounds.size(), want.size());
    int restarts = 0;
    for (size_t i = 0; i < r.rounds.size(); ++i) {
        const TuningRound& round = r.rounds[i];
        EXPECT_EQ(round.epoch, want[round.round].epoch) << "round " << round.round;
        EXPECT_EQ(round.restarted, want[round.round].restarted) << "round " << round.round;
        if (i > 0 && r.rounds[i - 1].restarted) {
            // The model forgot the task: the epoch begins with random samples, as a tuning does.
            EXPECT_EQ(round.chosen_by_model, 0) << "round " << round.round;
            EXPECT_EQ(round.random, round.measured) << "round " << round.round;
        }
        restarts += round.restarted;
    }
    EXPECT_GT(restarts, 0) << "no epoch stalled for 4 trials in 8 rounds";
    std::set<std::string> keys;
    for (const TuningRecord& rec : trial_records(records))
        keys.insert(state_key(task.apply_record(rec.schedule_json)));
    EXPECT_EQ(keys.size(), 64u) << "a restarted epoch measured a state of an earlier one";
    ScheduleCosts costs;  // the best stays the whole log's
    for (const TuningRecord& rec : records) costs.add(rec);
    ASSERT_TRUE(costs.best().has_value());
    EXPECT_EQ(r.best_seconds, costs.best()->seconds);
}

TEST(TuneRestart, ResumingFromTheFirstKRoundsProposesRoundK) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    SearchTask task = small_gemm_task(64);
    std::string log = fresh_log("full");
    TuningResult full = tune(task, restart_options(log, 64));
    std::vector<TuningRecord> records = read_records(log).records;
    // Resume after a round that restarted and after one that did not, the model choosing in it.
    // A model round of a later epoch when there is one: its model trained on that epoch's
    // programs alone, and the resumed tuner's must too.
    int64_t after_restart = -1, chosen_in_epoch = -1;
    for (size_t i = 1; i < full.rounds.size(); ++i) {
        if (full.rounds[i - 1].restarted && after_restart < 0) after_restart = int64_t(i);
        bool chosen = !full.rounds[i - 1].restarted && full.rounds[i].chosen_by_model > 0;
        bool later = chosen_in_epoch >= 0 && full.rounds[size_t(chosen_in_epoch)].epoch == 0 &&
                     full.rounds[i].epoch > 0;
        if (chosen && (chosen_in_epoch < 0 || later)) chosen_in_epoch = int64_t(i);
    }
    ASSERT_GE(after_restart, 0) << "no restart in the full run";
    ASSERT_GE(chosen_in_epoch, 0) << "no round of the full run chosen by the model";
    for (int64_t k : {after_restart, chosen_in_epoch}) {
        std::string part = fresh_log("k" + std::to_string(k));
        {
            RecordWriter w(part);
            std::vector<TuningRecord> first;
            for (const TuningRecord& rec : records)
                if (rec.round < k) first.push_back(rec);
            w.append(first);
        }
        int64_t done = static_cast<int64_t>(trial_records(read_records(part).records).size());
        TuningResult resumed = tune(task, restart_options(part, done + 8));
        ASSERT_EQ(resumed.rounds.size(), 1u);
        EXPECT_EQ(resumed.rounds[0].round, k);
        EXPECT_EQ(resumed.rounds[0].epoch, full.rounds[static_cast<size_t>(k)].epoch);
        std::vector<std::string> want, got;
        for (const TuningRecord& rec : trial_records(records))
            if (rec.round == k) want.push_back(rec.schedule_json);
        for (const TuningRecord& rec : trial_records(read_records(part).records))
            if (rec.round == k) got.push_back(rec.schedule_json);
        EXPECT_TRUE(got == want) << "round " << k << " proposed other candidates after the resume";
    }
}
