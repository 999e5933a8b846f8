// Synthetic tasks for the task scheduler's tests: a task whose best latency after t trials is a
// known curve, floor + (start - floor) * exp(-t / tau), tuned one round at a time without
// measuring anything; its rounds can be prepared ahead (prepare_round), and a PipelineProbe
// sees whether a round was prepared while another measured.
#pragma once

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
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

/// Shared by tasks whose rounds measure elsewhere: a round's measure() waits (up to `wait`) for
/// the next round's preparation, unless it is the last (`rounds` prepared in all), and each
/// preparation notes whether a round was measuring then.
struct PipelineProbe {
    int rounds = 0;  ///< rounds the scheduling prepares in all
    std::chrono::seconds wait{20};
    std::mutex mutex;
    std::condition_variable changed;
    int prepared = 0;
    int measuring = 0;                 ///< measure() calls begun and not ended
    int prepared_while_measuring = 0;  ///< preparations that saw one measuring

    // A preparation: measuring rounds wait for it. The measure thread may not have begun yet:
    // a preparation after the first waits for it (one round is always in flight then).
    void prepare() {
        std::unique_lock<std::mutex> lock(mutex);
        if (prepared > 0) changed.wait_for(lock, wait, [&] { return measuring > 0; });
        prepared_while_measuring += measuring > 0;
        ++prepared;
        changed.notify_all();
    }
    void measure() {
        std::unique_lock<std::mutex> lock(mutex);
        ++measuring;
        changed.notify_all();
        int seen = prepared;
        changed.wait_for(lock, wait, [&] { return prepared > seen || prepared >= rounds; });
        --measuring;
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
    /// A round of min(max_trials, what is left of the space after the rounds in flight).
    std::unique_ptr<TaskRound> prepare_round(int64_t max_trials) override {
        int64_t n =
            std::max<int64_t>(0, std::min<int64_t>(max_trials, c_.space - trials() - in_flight_));
        in_flight_ += n;
        if (probe_) probe_->prepare();
        return std::make_unique<Round>(*this, n);
    }
    const Curve& curve() const { return c_; }
    /// Its rounds measure elsewhere, seen by `probe`.
    void set_probe(std::shared_ptr<PipelineProbe> probe) { probe_ = std::move(probe); }

private:
    class Round : public TaskRound {
    public:
        Round(SyntheticTask& t, int64_t n) : t_(t), n_(n) {}
        ~Round() override { t_.in_flight_ -= done_ ? 0 : n_; }
        int64_t trials() const override { return n_; }
        bool measures_elsewhere() const override { return t_.probe_ != nullptr; }
        void measure() override {
            if (t_.probe_) t_.probe_->measure();
        }
        TaskRoundOutcome complete() override {
            done_ = true;
            t_.in_flight_ -= n_;
            if (n_ == 0) return {0, true};
            int64_t t = t_.trials() + n_;
            t_.rounds_.push_back({t, t_.c_.at(t)});
            return {n_, false};
        }

    private:
        SyntheticTask& t_;
        int64_t n_;
        bool done_ = false;
    };

    Curve c_;
    std::vector<TaskRoundPoint> rounds_;
    int64_t in_flight_ = 0;
    std::shared_ptr<PipelineProbe> probe_;
};

inline std::vector<std::unique_ptr<SchedulableTask>> synthetic_tasks(
    const std::vector<Curve>& curves) {
    std::vector<std::unique_ptr<SchedulableTask>> out;
    for (const Curve& c : curves) out.push_back(std::make_unique<SyntheticTask>(c));
    return out;
}

}  // namespace tessel::testing
