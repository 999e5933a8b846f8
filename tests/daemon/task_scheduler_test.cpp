// The task scheduler on synthetic tasks whose latency curves are known (SyntheticTask.h): the
// budget, round-robin's fairness, the gradient's warm-up and preferences, early stopping,
// exhausted tasks, resuming, and the bar: the gradient strategy reaches round-robin's
// final weighted latency with at most 70 % of the trials.
#include <gtest/gtest.h>

#include <algorithm>

#include "daemon/SyntheticTask.h"
#include "tessel/Error.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

TaskSchedulerOptions opts(const std::string& strategy, int64_t trials, uint64_t seed = 0) {
    TaskSchedulerOptions o;
    o.strategy = strategy;
    o.trials = trials;
    o.measurements_per_round = 16;
    o.seed = seed;
    return o;
}

// ResNet-50-like: the 20 distinct conv layers' FLOPs and counts, each with a curve from a slow
// start towards 150 GFLOP/s, converging at different speeds.
std::vector<Curve> network_like(std::vector<double>* weights) {
    struct L {
        double gflop;
        int count;
        double gap, tau;
    };
    const std::vector<L> layers = {
        {0.24, 1, 20, 150}, {0.03, 1, 5, 40},  {0.23, 3, 12, 120}, {0.10, 4, 6, 60},
        {0.10, 2, 6, 60},   {0.05, 1, 5, 40},  {0.23, 1, 15, 200}, {0.10, 4, 8, 80},
        {0.10, 1, 6, 60},   {0.10, 3, 8, 80},  {0.23, 3, 12, 120}, {0.10, 1, 6, 60},
        {0.23, 1, 15, 200}, {0.10, 6, 10, 90}, {0.10, 1, 6, 60},   {0.10, 5, 9, 90},
        {0.23, 5, 14, 150}, {0.10, 1, 6, 60},  {0.23, 1, 15, 200}, {0.10, 3, 8, 80},
    };
    std::vector<Curve> curves;
    for (size_t i = 0; i < layers.size(); ++i) {
        const L& l = layers[i];
        Curve c;
        c.flops = l.gflop * 1e9;
        c.floor = c.flops / 150e9;
        c.start = c.floor * l.gap;
        c.tau = l.tau;
        c.kind = "conv2d_" + std::to_string(i % 3);
        curves.push_back(c);
        weights->push_back(l.count);
    }
    return curves;
}

}  // namespace

TEST(TaskScheduler, RoundRobinGivesEveryTaskItsShareAndSpendsTheBudgetExactly) {
    std::vector<Curve> curves(4);
    auto tasks = synthetic_tasks(curves);
    TaskSchedulerResult r = schedule_tasks(tasks, {1, 1, 1, 1}, opts("round-robin", 4 * 48 + 7));
    EXPECT_EQ(r.stop_reason, "trials");
    EXPECT_EQ(r.trials, 4 * 48 + 7);
    for (size_t i = 0; i < 4; ++i) EXPECT_GE(tasks[i]->trials(), 48) << i;
    EXPECT_EQ(tasks[0]->trials(), 48 + 7);  // the last, short round
    for (size_t s = 0; s < r.steps.size(); ++s) EXPECT_EQ(r.steps[s].task, int(s % 4));
}

TEST(TaskScheduler, GradientWarmsUpThenFavoursTheTaskWorthMost) {
    // Task 1 weighs 10 and still has a large gap; the others are nearly done.
    Curve done;
    done.start = 1.01e-4;
    Curve slow;
    slow.start = 1e-2;
    slow.tau = 300;
    auto tasks = synthetic_tasks({done, slow, done});
    TaskSchedulerOptions o = opts("gradient", 16 * 12);
    o.eps_random = 0;
    TaskSchedulerResult r = schedule_tasks(tasks, {1, 10, 1}, o);
    ASSERT_EQ(r.steps.size(), 12u);
    for (int s = 0; s < 3; ++s) {
        EXPECT_EQ(r.steps[s].task, s);
        EXPECT_EQ(r.steps[s].why, "warm-up");
    }
    for (size_t s = 3; s < r.steps.size(); ++s) {
        EXPECT_EQ(r.steps[s].task, 1) << "step " << s;
        EXPECT_EQ(r.steps[s].why, "gradient");
    }
}

// A task restored with `rounds` rounds of 16 trials along its curve.
std::unique_ptr<SchedulableTask> after_rounds(const Curve& c, int rounds) {
    std::vector<TaskRoundPoint> points;
    for (int64_t t = 16; t <= 16 * rounds; t += 16) points.push_back({t, c.at(t)});
    return std::make_unique<SyntheticTask>(c, points);
}

TEST(TaskScheduler, TheSimilarityGroupsGuessPushesASlowMemberOfAFastGroup) {
    // Two tasks of one kind and FLOP count after 20 rounds each: task 0 runs 10x faster than
    // task 1, whose own curve gains 1.3 % a round (its own guess, g - g / t, is small), so only
    // the group's guess (beta * flops / the group's best FLOP/s) says that task 1 can gain
    // much. Task 2, of another kind, still improves a little.
    Curve fast, lagging, other;
    fast.start = fast.floor = 1e-4;
    lagging.start = 2e-3;
    lagging.floor = 1e-3;
    lagging.tau = 400;
    other.kind = "dense";
    other.flops = 5e8;
    other.start = 2e-4;
    other.floor = 1.5e-4;
    other.tau = 1000;
    TaskSchedulerOptions o = opts("gradient", 16 * 61);
    o.eps_random = 0;
    for (bool grouped : {true, false}) {
        lagging.kind = grouped ? fast.kind : "alone";
        std::vector<std::unique_ptr<SchedulableTask>> tasks;
        for (const Curve& c : {fast, lagging, other}) tasks.push_back(after_rounds(c, 20));
        TaskSchedulerResult r = schedule_tasks(tasks, {1, 1, 10}, o);
        ASSERT_EQ(r.steps.size(), 1u);
        EXPECT_EQ(r.steps[0].why, "gradient");
        EXPECT_EQ(r.steps[0].task, grouped ? 1 : 2) << (grouped ? "grouped" : "apart");
    }
}

// The same, with task 1 flat since its first round: the group's guess fades with the rounds it
// has not improved (fade_similarity_guess), so task 2 is chosen; Ansor's guess, which does not
// fade, keeps choosing task 1 (tune_network_cpu's 1 x 1 stride-2 convolution with 2048 outputs
// took 87 of 192 rounds so and gained nothing).
TEST(TaskScheduler, TheSimilarityGuessFadesForATaskThatDoesNotImprove) {
    Curve fast, flat, other;
    fast.start = fast.floor = 1e-4;
    flat.start = flat.floor = 1e-3;
    other.kind = "dense";
    other.flops = 5e8;
    other.start = 2e-4;
    other.floor = 1.5e-4;
    other.tau = 1000;
    for (bool fade : {true, false}) {
        TaskSchedulerOptions o = opts("gradient", 16 * 61);
        o.eps_random = 0;
        o.fade_similarity_guess = fade;
        std::vector<std::unique_ptr<SchedulableTask>> tasks;
        for (const Curve& c : {fast, flat, other}) tasks.push_back(after_rounds(c, 20));
        TaskSchedulerResult r = schedule_tasks(tasks, {1, 1, 10}, o);
        ASSERT_EQ(r.steps.size(), 1u);
        EXPECT_EQ(r.steps[0].task, fade ? 2 : 1) << (fade ? "faded" : "Ansor's");
    }
}

// A tuning task's similarity kind keeps what is not a size: ResNet-50's 1 x 1 convolutions of
// stride 1 are one kind whatever their channels and image, those of stride 2 (strided reads, a
// third of the FLOP/s in tune_network_cpu) another, the 3 x 3 ones a third; a dense layer's
// activation and the dtype count too.
TEST(TaskScheduler, SimilarityKindsKeepEverythingButSizes) {
    const Target cpu("llvm -num-cores=2");
    using L = std::vector<int64_t>;
    auto conv = [&](int64_t c, int64_t h, int64_t k, int64_t kernel, int64_t stride) {
        int64_t pad = kernel / 2;
        return similarity_kind(SearchTask("op.conv2d_nchw",
                                          {int64_t(1), c, h, h, k, L{kernel, kernel},
                                           L{stride, stride}, L{pad, pad, pad, pad}, L{1, 1},
                                           int64_t(1), Float(32)},
                                          cpu));
    };
    EXPECT_EQ(conv(1024, 14, 512, 1, 1), conv(64, 56, 256, 1, 1));
    EXPECT_NE(conv(1024, 14, 2048, 1, 2), conv(1024, 14, 512, 1, 1));
    EXPECT_EQ(conv(1024, 14, 2048, 1, 2), conv(256, 56, 512, 1, 2));
    EXPECT_NE(conv(256, 14, 256, 3, 1), conv(1024, 14, 512, 1, 1));
    EXPECT_EQ(conv(1024, 14, 2048, 1, 2),
              "op.conv2d_nchw([1,1], [2,2], [0,0,0,0], [1,1], float32)");

    auto dense = [&](int64_t n, const std::string& act, Type t) {
        return similarity_kind(SearchTask(
            "op.dense", {int64_t(128), n, int64_t(768), int64_t(1), act, t}, cpu));
    };
    EXPECT_EQ(dense(768, "none", Float(32)), dense(3072, "none", Float(32)));
    EXPECT_NE(dense(768, "none", Float(32)), dense(768, "gelu", Float(32)));
    EXPECT_NE(dense(768, "none", Float(32)), dense(768, "none", Float(64)));

    SearchTask from_dag(make_workload("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)}),
                        cpu);
    EXPECT_EQ(similarity_kind(from_dag), "dag:" + from_dag.dag_hash_hex());
}

TEST(TaskScheduler, EpsGreedyPicksRandomTasksAtItsRate) {
    Curve c;
    auto tasks = synthetic_tasks(std::vector<Curve>(5, c));
    TaskSchedulerOptions o = opts("gradient", 16 * 400, 7);
    o.eps_random = 0.25;
    TaskSchedulerResult r = schedule_tasks(tasks, {1, 2, 3, 4, 5}, o);
    int random = 0;
    for (const TaskSchedulerStep& s : r.steps) random += s.why == "random";
    EXPECT_GT(random, 400 * 0.25 * 0.6);
    EXPECT_LT(random, 400 * 0.25 * 1.4);
}

TEST(TaskScheduler, EarlyStoppingRetiresFlatTasks) {
    Curve flat;
    flat.start = flat.floor = 1e-3;
    Curve improving;
    improving.space = 64;  // exhausted after 64 trials
    auto tasks = synthetic_tasks({flat, improving});
    TaskSchedulerOptions o = opts("round-robin", 10000);
    o.early_stopping_per_task = 32;
    TaskSchedulerResult r = schedule_tasks(tasks, {1, 1}, o);
    EXPECT_EQ(r.stop_reason, "all_tasks_stopped");
    EXPECT_EQ(tasks[0]->trials(), 32);  // two rounds without improvement
    EXPECT_EQ(tasks[1]->trials(), 64);  // then its space ran out
}

TEST(TaskScheduler, ShouldStopStopsBeforeTheNextRound) {
    auto tasks = synthetic_tasks(std::vector<Curve>(2));
    TaskSchedulerOptions o = opts("gradient", 1000);
    int asked = 0;
    o.should_stop = [&] { return ++asked > 3; };
    TaskSchedulerResult r = schedule_tasks(tasks, {1, 1}, o);
    EXPECT_EQ(r.stop_reason, "stopped");
    EXPECT_EQ(r.steps.size(), 3u);
    EXPECT_EQ(r.trials, 48);
}

// The choices are a function of the tasks' histories and the seed: tasks restored with the
// rounds of the first k steps of a run make the run's remaining choices.
TEST(TaskScheduler, AResumedSchedulerMakesTheUninterruptedRunsChoices) {
    std::vector<double> weights;
    std::vector<Curve> curves = network_like(&weights);
    TaskSchedulerOptions o = opts("gradient", 16 * 80, 3);
    o.eps_random = 0.2;  // plenty of random draws to get wrong
    auto full = synthetic_tasks(curves);
    TaskSchedulerResult all = schedule_tasks(full, weights, o);
    ASSERT_EQ(all.steps.size(), 80u);
    for (size_t k : {1, 20, 37, 79}) {
        std::vector<std::unique_ptr<SchedulableTask>> resumed;
        for (size_t i = 0; i < curves.size(); ++i) {
            std::vector<TaskRoundPoint> rounds;
            for (size_t s = 0; s < k; ++s)
                if (all.steps[s].task == int(i))
                    rounds.push_back({0, 0});  // filled from the curve below
            int64_t t = 0;
            for (TaskRoundPoint& p : rounds) {
                t += 16;
                p = {t, curves[i].at(t)};
            }
            resumed.push_back(std::make_unique<SyntheticTask>(curves[i], rounds));
        }
        TaskSchedulerResult rest = schedule_tasks(resumed, weights, o);
        ASSERT_EQ(rest.steps.size(), 80 - k);
        for (size_t s = 0; s < rest.steps.size(); ++s) {
            EXPECT_EQ(rest.steps[s].step, all.steps[k + s].step);
            EXPECT_EQ(rest.steps[s].task, all.steps[k + s].task) << "k " << k << " step " << s;
        }
        EXPECT_EQ(rest.objective, all.objective);
    }
}

// The bar on synthetic tasks: the median over seeds of the trials the gradient strategy
// needs to reach round-robin's final weighted latency is at most 70 % of the budget.
TEST(TaskScheduler, GradientReachesRoundRobinsFinalLatencyWithAtMost70PercentOfTheTrials) {
    std::vector<double> weights;
    std::vector<Curve> curves = network_like(&weights);
    const int64_t budget = 128 * static_cast<int64_t>(curves.size());
    auto rr_tasks = synthetic_tasks(curves);
    TaskSchedulerResult rr = schedule_tasks(rr_tasks, weights, opts("round-robin", budget));
    ASSERT_EQ(rr.trials, budget);
    std::vector<double> shares;
    for (uint64_t seed : {1, 2, 3}) {
        auto tasks = synthetic_tasks(curves);
        TaskSchedulerResult g = schedule_tasks(tasks, weights, opts("gradient", budget, seed));
        int64_t reached = budget * 10;
        for (const TaskSchedulerStep& s : g.steps)
            if (s.objective <= rr.objective) {
                reached = s.trials;
                break;
            }
        shares.push_back(static_cast<double>(reached) / static_cast<double>(budget));
        EXPECT_LT(g.objective, rr.objective) << "seed " << seed;
    }
    std::sort(shares.begin(), shares.end());
    std::cout << "gradient reaches round-robin's final weighted latency (" << rr.objective * 1e3
              << " ms) after " << shares[1] * 100 << " % of the trials (median of 3 seeds)\n";
    EXPECT_LE(shares[1], 0.70);
}

TEST(TaskScheduler, BadOptionsAreRefused) {
    auto tasks = synthetic_tasks(std::vector<Curve>(2));
    EXPECT_THROW(schedule_tasks(tasks, {1}, opts("gradient", 10)), RuntimeError);
    EXPECT_THROW(schedule_tasks(tasks, {1, 0}, opts("gradient", 10)), RuntimeError);
    EXPECT_THROW(schedule_tasks(tasks, {1, 1}, opts("greedy", 10)), RuntimeError);
    TaskSchedulerOptions o = opts("gradient", 10);
    o.measurements_per_round = 0;
    EXPECT_THROW(schedule_tasks(tasks, {1, 1}, o), RuntimeError);
    std::vector<std::unique_ptr<SchedulableTask>> none;
    EXPECT_THROW(schedule_tasks(none, {}, opts("gradient", 10)), RuntimeError);
}
