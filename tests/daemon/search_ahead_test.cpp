// Searching ahead (TuningOptions::search_ahead, TaskSchedulerOptions::search_ahead): round N+1
// is searched before round N is recorded. The records depend on the option alone: a runner that
// times elsewhere (the search then runs beside its run(), on another thread) and one that does
// not write the same ones; they differ from a sequential run's as the semantics say (the round
// sizes lag one round); a measurement's error reaches the caller typed; a resumed run searches
// what the uninterrupted one did; the task scheduler prepares the next step while one measures,
// within the budget.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "auto_schedule/tuner/TunerInternal.h"
#include "daemon/DaemonTestUtil.h"
#include "daemon/SyntheticTask.h"
#include "tessel/Error.h"
#include "tessel/auto_schedule/records/Record.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

// Measures nothing: a candidate costs a time derived from its steps (FNV-1a of its JSON), so
// every run of a seed writes the same records. Notes the threads its runs ran on.
class FakeRunner : public MeasureRunner {
public:
    explicit FakeRunner(bool elsewhere, int throw_on_run = -1)
        : elsewhere_(elsewhere), throw_on_run_(throw_on_run) {}
    std::vector<MeasureResult> run(const MeasureRequest& request) override {
        int call = runs_++;
        (std::this_thread::get_id() == caller_ ? runs_here_ : runs_elsewhere_)++;
        if (call == throw_on_run_) TESSEL_THROW(RuntimeError) << "the farm is on fire";
        if (elsewhere_) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        std::vector<MeasureResult> out;
        for (const MeasureCandidate& c : request.candidates) {
            uint64_t h = 1469598103934665603ULL;
            for (unsigned char ch : c.schedule_json) h = (h ^ ch) * 1099511628211ULL;
            MeasureResult r;
            r.costs = {1e-4 * (1 + static_cast<double>(h % 1000) / 100)};
            out.push_back(r);
        }
        return out;
    }
    bool times_elsewhere() const override { return elsewhere_; }
    /// Runs on the thread that made the runner, and on others.
    int runs_here() const { return runs_here_; }
    int runs_elsewhere() const { return runs_elsewhere_; }

private:
    bool elsewhere_;
    int throw_on_run_;
    std::thread::id caller_ = std::this_thread::get_id();
    std::atomic<int> runs_{0}, runs_here_{0}, runs_elsewhere_{0};
};

TuningOptions ahead_options(const fs::path& log, std::shared_ptr<MeasureRunner> runner,
                            int64_t trials = 80) {
    TuningOptions o;
    o.trials = trials;
    o.log_file = log.string();
    o.seed = 5;
    o.population = 32;
    o.generations = 1;
    o.num_threads = 1;
    o.verbose = 0;
    o.cost_model.min_programs = 16;
    o.measure_runner = std::move(runner);
    o.search_ahead = true;
    return o;
}

// What a record says, without when, where and how long.
struct Row {
    std::string schedule;
    std::vector<double> costs;
    int64_t round;
    CandidateOrigin origin;
    bool operator==(const Row& o) const {
        return schedule == o.schedule && costs == o.costs && round == o.round && origin == o.origin;
    }
    bool trial() const {
        return origin != CandidateOrigin::Remeasure && origin != CandidateOrigin::Check;
    }
};

std::vector<Row> rows(const fs::path& log) {
    std::vector<Row> out;
    for (const TuningRecord& r : read_records(log.string()).records)
        out.push_back({r.schedule_json, r.costs, r.round, r.origin});
    return out;
}

// Trials per round, in round order.
std::vector<int> round_sizes(const std::vector<Row>& rs) {
    std::vector<int> sizes;
    for (const Row& r : rs) {
        if (!r.trial()) continue;
        if (static_cast<int64_t>(sizes.size()) <= r.round) sizes.resize(r.round + 1, 0);
        ++sizes[r.round];
    }
    return sizes;
}

std::vector<std::string> round_schedules(const std::vector<Row>& rs, int64_t round) {
    std::vector<std::string> out;
    for (const Row& r : rs)
        if (r.round == round && r.trial()) out.push_back(r.schedule);
    return out;
}

}  // namespace

TEST(SearchAhead, ARunnerTimingElsewhereAndOneTimingHereWriteTheSameRecords) {
    fs::path dir = fresh_dir();
    auto there = std::make_shared<FakeRunner>(true);
    auto here = std::make_shared<FakeRunner>(false);
    TuningResult a = tune(small_task(), ahead_options(dir / "there.jsonl", there));
    TuningResult b = tune(small_task(), ahead_options(dir / "here.jsonl", here));
    EXPECT_EQ(a.trials, 80);
    EXPECT_EQ(a.stop_reason, "trials");
    EXPECT_TRUE(rows(dir / "there.jsonl") == rows(dir / "here.jsonl"));
    // The rounds' trials measured on a thread of their own beside the search, the
    // re-measurements and the final check on the caller's; without timing
    // elsewhere, everything on the caller's.
    EXPECT_EQ(there->runs_elsewhere(), static_cast<int>(a.rounds.size()));
    EXPECT_EQ(there->runs_here(), static_cast<int>(a.rounds.size()) + 1);
    EXPECT_EQ(here->runs_elsewhere(), 0);
    EXPECT_EQ(here->runs_here(), 2 * static_cast<int>(b.rounds.size()) + 1);
    EXPECT_EQ(a.final_seconds, a.best_seconds);  // the fake runner's cost of the best, again
}

TEST(SearchAhead, RoundsAreSearchedWithoutTheRoundBeforeThem) {
    // The model trains after 16 successes and a round measures at most what the model knows:
    // sequentially 16, 16, 32 and the 16 left; searching ahead each round is sized (and
    // searched) without the round before it: 16, 16, 16, 32.
    fs::path dir = fresh_dir();
    TuningOptions seq = ahead_options(dir / "seq.jsonl", std::make_shared<FakeRunner>(false));
    seq.search_ahead = false;
    TuningResult sr = tune(small_task(), seq);
    TuningResult ar =
        tune(small_task(), ahead_options(dir / "ahead.jsonl", std::make_shared<FakeRunner>(false)));
    std::vector<Row> s = rows(dir / "seq.jsonl"), a = rows(dir / "ahead.jsonl");
    EXPECT_EQ(round_sizes(s), (std::vector<int>{16, 16, 32, 16}));
    EXPECT_EQ(round_sizes(a), (std::vector<int>{16, 16, 16, 32}));
    // Round 0 is the same. Sequentially the model trains on it and chooses round 1; searched
    // ahead, round 1 is random (no program yet) and the model chooses from round 2 on, trained
    // on round 0 alone.
    EXPECT_TRUE(round_schedules(s, 0) == round_schedules(a, 0));
    EXPECT_FALSE(round_schedules(s, 1) == round_schedules(a, 1));
    ASSERT_EQ(sr.rounds.size(), 4u);
    ASSERT_EQ(ar.rounds.size(), 4u);
    EXPECT_GT(sr.rounds[1].chosen_by_model, 0);
    EXPECT_EQ(ar.rounds[1].chosen_by_model, 0);
    EXPECT_EQ(ar.rounds[1].random, 16);
    EXPECT_GT(ar.rounds[2].chosen_by_model, 0);
    std::set<std::string> keys;
    for (const Row& r : a) {
        if (r.trial()) {
            EXPECT_TRUE(keys.insert(r.schedule).second);
        }
    }
    EXPECT_EQ(keys.size(), 80u);  // no state is a trial twice, not even one in flight
}

TEST(SearchAhead, AnErrorInTheMeasuringThreadReachesTheCallerTyped) {
    fs::path dir = fresh_dir();
    // The third run is round 1's trials (round 0's re-measurements are the second), measured
    // beside round 2's search.
    auto runner = std::make_shared<FakeRunner>(true, 2);
    try {
        tune(small_task(), ahead_options(dir / "log.jsonl", runner));
        ADD_FAILURE() << "no error";
    } catch (const RuntimeError& e) {
        EXPECT_NE(std::string(e.what()).find("the farm is on fire"), std::string::npos);
    }
    EXPECT_EQ(round_sizes(rows(dir / "log.jsonl")), (std::vector<int>{16}));
}

TEST(SearchAhead, MeasureWhileRunsBothAtOnceOnlyWhenAsked) {
    for (bool concurrently : {true, false}) {
        std::mutex m;
        std::condition_variable cv;
        bool searched = false, seen_while_measuring = false;
        internal::measure_while(
            concurrently,
            [&] {
                std::unique_lock<std::mutex> lock(m);
                // Waits for the search; sequentially it comes after, and the wait runs out.
                auto wait = concurrently ? std::chrono::seconds(30) : std::chrono::seconds(0);
                seen_while_measuring = cv.wait_for(lock, wait, [&] { return searched; });
            },
            [&] {
                std::lock_guard<std::mutex> lock(m);
                searched = true;
                cv.notify_all();
            });
        EXPECT_EQ(seen_while_measuring, concurrently);
        EXPECT_TRUE(searched);
    }
    // Both threw: the measurement's error wins; the search's alone comes through too.
    EXPECT_THROW(internal::measure_while(
                     true, [] { throw std::range_error("measure"); },
                     [] { throw std::logic_error("search"); }),
                 std::range_error);
    EXPECT_THROW(internal::measure_while(
                     true, [] {}, [] { throw std::logic_error("search"); }),
                 std::logic_error);
}

TEST(SearchAhead, AResumedRunSearchesWhatTheUninterruptedOneDid) {
    fs::path dir = fresh_dir();
    tune(small_task(), ahead_options(dir / "whole.jsonl", std::make_shared<FakeRunner>(true)));
    // Stopped after three rounds (the fourth, searched already, never measured), then resumed.
    TuningOptions o = ahead_options(dir / "resumed.jsonl", std::make_shared<FakeRunner>(true));
    int rounds = 0;
    o.on_progress = [&](const TuningProgress& p) { rounds += p.last_round.has_value(); };
    o.should_stop = [&] { return rounds >= 3; };
    TuningResult first = tune(small_task(), o);
    EXPECT_EQ(first.stop_reason, "stopped");
    EXPECT_EQ(round_sizes(rows(dir / "resumed.jsonl")), (std::vector<int>{16, 16, 16}));
    fs::copy_file(dir / "resumed.jsonl", dir / "whole_log.jsonl");
    o.on_progress = nullptr;
    o.should_stop = nullptr;
    TuningResult second = tune(small_task(), o);
    EXPECT_EQ(second.resumed_trials, 48);
    EXPECT_TRUE(rows(dir / "resumed.jsonl") == rows(dir / "whole.jsonl"));
    // Resumed with the whole log in the history, the first round searched differs: the test
    // sees the difference the held-back round makes.
    o.log_file = (dir / "whole_log.jsonl").string();
    internal::Tuner tuner(small_task(), o, /*hold_back_last_round=*/false);
    tuner.run_rounds_ahead();
    EXPECT_FALSE(rows(dir / "whole_log.jsonl") == rows(dir / "whole.jsonl"));
}

TEST(SearchAhead, TheSchedulerGrantsNoMoreThanTheBudgetAndEveryTaskGetsRounds) {
    for (const char* strategy : {"round-robin", "gradient"}) {
        std::vector<Curve> curves(4);
        for (size_t i = 0; i < curves.size(); ++i) curves[i].tau = 50.0 * (i + 1);
        auto tasks = synthetic_tasks(curves);
        TaskSchedulerOptions o;
        o.strategy = strategy;
        o.trials = 4 * 48 + 7;
        o.measurements_per_round = 16;
        o.search_ahead = true;
        TaskSchedulerResult r = schedule_tasks(tasks, {1, 2, 1, 1}, o);
        EXPECT_EQ(r.stop_reason, "trials") << strategy;
        EXPECT_EQ(r.trials, 4 * 48 + 7) << strategy;
        for (size_t i = 0; i < tasks.size(); ++i)
            EXPECT_FALSE(tasks[i]->rounds().empty()) << strategy << " task " << i;
        // The warm-up (and round-robin) count a round in flight: the first four steps are the
        // four tasks, in order.
        for (int s = 0; s < 4; ++s) EXPECT_EQ(r.steps[s].task, s) << strategy;
        for (size_t s = 0; s < r.steps.size(); ++s) EXPECT_LE(r.steps[s].trials, o.trials);
        if (std::string(strategy) == "round-robin") {
            for (size_t s = 0; s < r.steps.size(); ++s) EXPECT_EQ(r.steps[s].task, int(s % 4));
        }
    }
}

TEST(SearchAhead, TheSchedulerPreparesTheNextStepWhileOneMeasures) {
    // Two tasks whose rounds measure elsewhere, 6 steps: every preparation but the first comes
    // while a round measures (the probe's measure() waits for it).
    std::vector<Curve> curves(2);
    curves[1].tau = 20;
    auto tasks = synthetic_tasks(curves);
    auto probe = std::make_shared<PipelineProbe>();
    probe->rounds = 6;
    for (auto& t : tasks) static_cast<SyntheticTask&>(*t).set_probe(probe);
    TaskSchedulerOptions o;
    o.trials = 6 * 16;
    o.measurements_per_round = 16;
    o.search_ahead = true;
    TaskSchedulerResult r = schedule_tasks(tasks, {1, 1}, o);
    EXPECT_EQ(r.trials, 96);
    EXPECT_EQ(probe->prepared, 6);
    EXPECT_EQ(probe->prepared_while_measuring, 5);
}

TEST(SearchAhead, TheSchedulerChoosesAsTheSequentialOneWhereResultsDoNotMatter) {
    // Round-robin's choices do not depend on the rounds' results: the same steps either way;
    // a task that cannot prepare ahead (the default TaskRound) is tuned when completed.
    struct Plain : SyntheticTask {
        using SyntheticTask::SyntheticTask;
        std::unique_ptr<TaskRound> prepare_round(int64_t max_trials) override {
            return SchedulableTask::prepare_round(max_trials);
        }
    };
    std::vector<std::unique_ptr<SchedulableTask>> a, b;
    for (int i = 0; i < 3; ++i) {
        a.push_back(std::make_unique<Plain>(Curve{}));
        b.push_back(std::make_unique<SyntheticTask>(Curve{}));
    }
    TaskSchedulerOptions o;
    o.strategy = "round-robin";
    o.trials = 100;
    TaskSchedulerResult seq = schedule_tasks(b, {1, 1, 1}, o);
    o.search_ahead = true;
    TaskSchedulerResult ahead = schedule_tasks(a, {1, 1, 1}, o);
    ASSERT_EQ(seq.steps.size(), ahead.steps.size());
    for (size_t s = 0; s < seq.steps.size(); ++s) {
        EXPECT_EQ(seq.steps[s].task, ahead.steps[s].task) << s;
        EXPECT_EQ(seq.steps[s].trials, ahead.steps[s].trials) << s;
    }
    EXPECT_EQ(ahead.trials, 100);
}
