// Synthetic tasks for the task scheduler's tests: a task whose best latency after t trials is a
// known curve, floor + (start - floor) * exp(-t / tau), tuned one round at a time without
// measuring anything.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "tessel/auto_schedule/tuner/TaskScheduler.h"

namespace tessel::testing {

struct Curve {
    double start = 1e-3;  ///< seconds after the first trial
    double floor = 1e-4;  ///< seconds after infinitely many
    double tau = 100;     ///< trials to close 63 % of the gap
    double flops = 1e9;
    std::string kind = "conv2d";
    int64_t space = 1 << 30;  ///< states in the search space (exhausted after)

    double at(int64_t trials) const {
        return floor + (start - floor) * std::exp(-static_cast<double>(trials - 1) / tau);
    }
};

class SyntheticTask : public SchedulableTask {
public:
    explicit SyntheticTask(Curve c, std::vector<TaskRoundPoint> rounds = {})
        : c_(std::move(c)), rounds_(std::move(rounds)) {}
    std::string name() const override { return c_.kind; }
    std::string kind() const override { return c_.kind; }
    double flops() const override { return c_.flops; }
    std::vector<TaskRoundPoint> rounds() const override { return rounds_; }
    int64_t trials_since_improvement() const override {
        // The curve improves with every trial unless it is flat (start == floor).
        return c_.start == c_.floor ? trials() : 0;
    }
    TaskRoundOutcome tune_round(int64_t max_trials) override {
        int64_t n = std::min<int64_t>(max_trials, c_.space - trials());
        if (n <= 0) return {0, true};
        int64_t t = trials() + n;
        rounds_.push_back({t, c_.at(t)});
        return {n, false};
    }
    const Curve& curve() const { return c_; }

private:
    Curve c_;
    std::vector<TaskRoundPoint> rounds_;
};

inline std::vector<std::unique_ptr<SchedulableTask>> synthetic_tasks(
    const std::vector<Curve>& curves) {
    std::vector<std::unique_ptr<SchedulableTask>> out;
    for (const Curve& c : curves) out.push_back(std::make_unique<SyntheticTask>(c));
    return out;
}

}  // namespace tessel::testing
