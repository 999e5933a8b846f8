// The time evaluator with a fake clock: counts, rotation and statistics are exact.
#include <gtest/gtest.h>

#include <cmath>

#include "tessel/Error.h"
#include "tessel/runtime/TimeEvaluator.h"

namespace tessel {
namespace {

/// A clock that each call of the measured function advances by the next duration in `costs`.
struct FakeClock {
    double now = 0;
    std::vector<double> costs;
    size_t next = 0;
    std::vector<int> sets;

    void call(int set) {
        sets.push_back(set);
        now += costs[next++ % costs.size()];
    }
};

TEST(TimeEvaluator, RepeatsUntilMinimumTimeAndRotatesInputs) {
    FakeClock c;
    c.costs = {0.25};
    TimeEvaluatorOptions o;
    o.warmup = 2;
    o.min_repeats = 2;
    o.max_repeats = 100;
    o.min_total_seconds = 1.0;
    o.clock = [&] { return c.now; };
    TimingResult r = time_evaluate([&](int s) { c.call(s); }, 3, o);
    EXPECT_EQ(r.samples.size(), 4u);  // 4 x 0.25 s reaches 1 s
    EXPECT_EQ(c.sets, (std::vector<int>{0, 1, 2, 0, 1, 2}));
    EXPECT_DOUBLE_EQ(r.median, 0.25);
    EXPECT_DOUBLE_EQ(r.stddev, 0.0);
}

TEST(TimeEvaluator, MinAndMaxRepeatsBound) {
    FakeClock c;
    c.costs = {1.0};
    TimeEvaluatorOptions o;
    o.warmup = 0;
    o.min_repeats = 5;
    o.max_repeats = 10;
    o.min_total_seconds = 0.5;
    o.clock = [&] { return c.now; };
    EXPECT_EQ(time_evaluate([&](int s) { c.call(s); }, 1, o).samples.size(), 5u);
    c.costs = {0.001};
    o.min_total_seconds = 100;
    EXPECT_EQ(time_evaluate([&](int s) { c.call(s); }, 1, o).samples.size(), 10u);
}

TEST(TimeEvaluator, Statistics) {
    TimingResult r = summarize_samples({4, 1, 3, 2});
    EXPECT_DOUBLE_EQ(r.median, 2.5);
    EXPECT_DOUBLE_EQ(r.mean, 2.5);
    EXPECT_DOUBLE_EQ(r.min, 1);
    EXPECT_DOUBLE_EQ(r.max, 4);
    EXPECT_DOUBLE_EQ(r.stddev, std::sqrt(1.25));
    EXPECT_EQ(r.samples, (std::vector<double>{4, 1, 3, 2}));
    EXPECT_DOUBLE_EQ(summarize_samples({5, 1, 9}).median, 5);
    EXPECT_THROW(summarize_samples({}), RuntimeError);
}

TEST(TimeEvaluator, InvalidOptionsAndThrowingFunction) {
    TimeEvaluatorOptions o;
    o.min_repeats = 0;
    EXPECT_THROW(time_evaluate([](int) {}, 1, o), RuntimeError);
    EXPECT_THROW(time_evaluate([](int) {}, 0, {}), RuntimeError);
    EXPECT_THROW(time_evaluate([](int) { throw std::logic_error("x"); }, 1, {}), std::logic_error);
    TimingResult real = time_evaluate([](int) {}, 1, {0, 3, 3, 0.0, {}});
    EXPECT_EQ(real.samples.size(), 3u);
    EXPECT_GE(real.min, 0.0);
}

}  // namespace
}  // namespace tessel
