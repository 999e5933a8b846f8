// The task scheduler (auto_schedule/tuner/TaskScheduler.h): schedule_tasks() at the bottom reads as
// its steps; the choice of a task (round-robin or Ansor's gradient) is above it, and TuningTask,
// the tuner seen as a task tuned one round at a time, below.
#include "tessel/auto_schedule/tuner/TaskScheduler.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "TunerInternal.h"
#include "support/SplitMix.h"
#include "tessel/Error.h"

namespace tessel {

namespace {

using internal::mix;
using internal::unit_interval;

// Ansor's stand-in for "no valid schedule yet": large, so such a task looks most worth a round.
constexpr double kNoTime = 1e10;

// A uniform draw in [0, 1) and an index below n from one step's seed.
double uniform(uint64_t seed) {
    return unit_interval(mix(seed));
}
size_t below(uint64_t seed, size_t n) {
    return static_cast<size_t>(mix(seed ^ 0x5bd1e995ULL) % n);
}

double time_or_sentinel(double seconds) {
    return std::isfinite(seconds) ? seconds : kNoTime;
}

void check(const std::vector<std::unique_ptr<SchedulableTask>>& tasks,
           const std::vector<double>& weights, const TaskSchedulerOptions& o) {
    auto fail = [](const std::string& what) {
        TESSEL_THROW(RuntimeError) << "schedule_tasks: " << what;
    };
    if (tasks.empty()) fail("no tasks");
    if (weights.size() != tasks.size())
        fail(std::to_string(weights.size()) + " weights for " + std::to_string(tasks.size()) +
             " tasks");
    for (double w : weights)
        if (!(w > 0 && std::isfinite(w))) fail("a weight must be a positive finite number");
    if (o.strategy != "gradient" && o.strategy != "round-robin")
        fail("strategy must be \"gradient\" or \"round-robin\", got \"" + o.strategy + "\"");
    if (o.trials < 0) fail("trials must be at least 0");
    if (o.measurements_per_round < 1) fail("measurements_per_round must be at least 1");
    if (!(o.alpha >= 0 && o.alpha <= 1)) fail("alpha must be in [0, 1]");
    if (!(o.beta > 0)) fail("beta must be positive");
    if (o.backward_window < 1) fail("backward_window must be at least 1");
    if (!(o.eps_random >= 0 && o.eps_random <= 1)) fail("eps_random must be in [0, 1]");
    if (o.early_stopping_per_task < 0) fail("early_stopping_per_task must be at least 0");
}

// What a choice looks at: each task's rounds, read once per step.
struct TaskView {
    std::vector<TaskRoundPoint> rounds;
    double best = kNoTime;
    double flops = 0;
    std::string group;
};

// Rounds since the task's best last improved by 1 % (the first round with a success improves).
int64_t stalled_rounds(const TaskView& v) {
    int64_t stalled = 0;
    for (size_t r = v.rounds.size(); r-- > 0; ++stalled) {
        double before = r == 0 ? kNoTime : time_or_sentinel(v.rounds[r - 1].best_seconds);
        if (time_or_sentinel(v.rounds[r].best_seconds) < before * 0.99) break;
    }
    return stalled;
}

std::string similarity_group(const SchedulableTask& t) {
    double flops = t.flops();
    int bucket = flops > 0 ? static_cast<int>(std::log(flops + 1) / std::log(1.618)) : -1;
    return t.kind() + "#" + std::to_string(bucket);
}

class Chooser {
public:
    Chooser(const std::vector<std::unique_ptr<SchedulableTask>>& tasks,
            const std::vector<double>& weights, const TaskSchedulerOptions& o)
        : tasks_(tasks), weights_(weights), o_(o) {
        for (const auto& t : tasks) groups_.push_back(similarity_group(*t));
    }

    /// The task of step `step` among the live ones, and why it was chosen; `in_flight`: the task
    /// whose round is measuring (-1: none), which counts that round among its rounds.
    std::pair<int, std::string> choose(const std::vector<bool>& live, int64_t step,
                                       int in_flight = -1) {
        std::vector<TaskView> views = read();
        std::vector<int> alive;
        for (size_t i = 0; i < live.size(); ++i)
            if (live[i]) alive.push_back(static_cast<int>(i));
        auto rounds = [&](int i) { return views[i].rounds.size() + (i == in_flight ? 1 : 0); };
        if (o_.strategy == "round-robin") {
            int pick = alive[0];
            for (int i : alive)
                if (rounds(i) < rounds(pick)) pick = i;
            return {pick, "round-robin"};
        }
        for (int i : alive)
            if (rounds(i) == 0) return {i, "warm-up"};
        uint64_t seed = mix(o_.seed ^ mix(static_cast<uint64_t>(step)));
        if (uniform(seed) < o_.eps_random) return {alive[below(seed + 1, alive.size())], "random"};
        std::vector<double> grads;
        for (int i : alive) grads.push_back(gradient(views, i));
        auto [lo, hi] = std::minmax_element(grads.begin(), grads.end());
        if (*lo == *hi) return {alive[below(seed + 2, alive.size())], "random"};
        return {alive[static_cast<size_t>(lo - grads.begin())], "gradient"};
    }

private:
    std::vector<TaskView> read() const {
        std::vector<TaskView> views;
        for (size_t i = 0; i < tasks_.size(); ++i) {
            TaskView v;
            v.rounds = tasks_[i]->rounds();
            if (!v.rounds.empty()) v.best = time_or_sentinel(v.rounds.back().best_seconds);
            v.flops = tasks_[i]->flops();
            v.group = groups_[i];
            views.push_back(std::move(v));
        }
        return views;
    }

    // Ansor's gradient of the objective with respect to one more round of task i (file comment
    // of the header): negative; the most negative is the most promising.
    double gradient(const std::vector<TaskView>& views, int i) const {
        const TaskView& v = views[i];
        const int64_t t = static_cast<int64_t>(v.rounds.size());
        const int64_t w = o_.backward_window;
        double backward = 0;
        if (t - 1 - w >= 0)
            backward = (time_or_sentinel(v.rounds[t - 1].best_seconds) -
                        time_or_sentinel(v.rounds[t - 1 - w].best_seconds)) /
                       static_cast<double>(w);
        double next = v.best - v.best / static_cast<double>(t);
        double group_best_flops = 0;  // FLOP/s of the group's fastest, i included
        int members = 0;
        for (const TaskView& u : views) {
            if (u.group != v.group) continue;
            ++members;
            if (u.flops > 0 && u.best < kNoTime)
                group_best_flops = std::max(group_best_flops, u.flops / u.best);
        }
        if (members > 1 && group_best_flops > 0 && v.flops > 0) {
            double guess = o_.beta * v.flops / group_best_flops;
            // The gap to the guess, believed less for every round the task has not improved.
            if (o_.fade_similarity_guess)
                guess = v.best - (v.best - guess) / static_cast<double>(1 + stalled_rounds(v));
            next = std::min(next, guess);
        }
        double forward = next - v.best;
        return weights_[i] * (o_.alpha * backward + (1 - o_.alpha) * forward);
    }

    const std::vector<std::unique_ptr<SchedulableTask>>& tasks_;
    const std::vector<double>& weights_;
    const TaskSchedulerOptions& o_;
    std::vector<std::string> groups_;
};

int64_t total_trials(const std::vector<std::unique_ptr<SchedulableTask>>& tasks) {
    int64_t n = 0;
    for (const auto& t : tasks) n += t->trials();
    return n;
}

int64_t total_rounds(const std::vector<std::unique_ptr<SchedulableTask>>& tasks) {
    int64_t n = 0;
    for (const auto& t : tasks) n += static_cast<int64_t>(t->rounds().size());
    return n;
}

// The tasks still tuned: not exhausted, not stopped early.
std::vector<bool> live_tasks(const std::vector<std::unique_ptr<SchedulableTask>>& tasks,
                             const std::vector<bool>& exhausted, const TaskSchedulerOptions& o) {
    std::vector<bool> live(tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i)
        live[i] =
            !exhausted[i] && !(o.early_stopping_per_task > 0 &&
                               tasks[i]->trials_since_improvement() >= o.early_stopping_per_task);
    return live;
}

bool any(const std::vector<bool>& v) {
    return std::find(v.begin(), v.end(), true) != v.end();
}

// The scheduling's end: each task's final check (unless it was stopped), then the objective.
void finish(const std::vector<std::unique_ptr<SchedulableTask>>& tasks,
            const std::vector<double>& weights, TaskSchedulerResult& result) {
    if (result.stop_reason != "stopped")
        for (const std::unique_ptr<SchedulableTask>& task : tasks) task->check_best();
    result.objective = weighted_latency(tasks, weights);
}

// A step whose round is done: its task marked exhausted if it is, the step's trials and objective
// filled in, the step recorded and reported. False when the round measured nothing without
// being exhausted (the task's should_stop interrupted it): the scheduling stops.
bool finish_step(TaskSchedulerStep& step,
                 const std::vector<std::unique_ptr<SchedulableTask>>& tasks,
                 const std::vector<double>& weights, std::vector<bool>& exhausted,
                 TaskSchedulerResult& result,
                 const std::function<void(const TaskSchedulerStep&)>& on_step) {
    if (step.outcome.exhausted) exhausted[static_cast<size_t>(step.task)] = true;
    step.trials = total_trials(tasks);
    step.objective = weighted_latency(tasks, weights);
    result.steps.push_back(step);
    if (on_step) on_step(step);
    if (step.outcome.measured == 0 && !step.outcome.exhausted) {
        result.stop_reason = "stopped";
        return false;
    }
    return true;
}

// A round that does all its work when completed: the task tunes one round then (tune_round).
class DeferredRound : public TaskRound {
public:
    DeferredRound(SchedulableTask& task, int64_t max_trials) : task_(task), max_(max_trials) {}
    int64_t trials() const override { return max_; }
    void measure() override {}
    TaskRoundOutcome complete() override { return task_.tune_round(max_); }

private:
    SchedulableTask& task_;
    int64_t max_;
};

// A step chosen and its round prepared, not yet measured.
struct PreparedStep {
    TaskSchedulerStep step;
    std::unique_ptr<TaskRound> round;
};

// The scheduling with search_ahead (the header's file comment): step s+1 is chosen and prepared
// while step s measures, then step s is completed.
class AheadScheduler {
public:
    AheadScheduler(const std::vector<std::unique_ptr<SchedulableTask>>& tasks,
                   const std::vector<double>& weights, const TaskSchedulerOptions& o)
        : tasks_(tasks),
          weights_(weights),
          o_(o),
          chooser_(tasks, weights, o),
          exhausted_(tasks.size(), false) {}

    TaskSchedulerResult run(const std::function<void(const TaskSchedulerStep&)>& on_step) {
        TaskSchedulerResult result;
        int64_t trials = total_trials(tasks_);
        std::optional<PreparedStep> next;
        while (true) {
            if (!next) {
                if (trials >= o_.trials) {
                    result.stop_reason = "trials";
                    break;
                }
            }
            if (o_.should_stop && o_.should_stop()) {
                result.stop_reason = "stopped";
                break;
            }
            if (!next) {
                next = prepare(total_rounds(tasks_), trials, -1);
                if (!next) {
                    result.stop_reason = "all_tasks_stopped";
                    break;
                }
            }
            PreparedStep now = std::move(*next);
            next.reset();
            measure_while_preparing(now, trials, next);
            now.step.outcome = now.round->complete();
            now.round.reset();
            const bool go_on = finish_step(now.step, tasks_, weights_, exhausted_, result, on_step);
            trials = now.step.trials;
            if (!go_on) break;
        }
        result.trials = trials;
        finish(tasks_, weights_, result);
        return result;
    }

private:
    // Measures `now`'s round while the step after it is chosen and prepared (into `next`), from
    // the tasks as they are without `now`'s results, `now`'s trials counted as spent.
    void measure_while_preparing(PreparedStep& now, int64_t trials,
                                 std::optional<PreparedStep>& next) {
        internal::measure_while(
            now.round->measures_elsewhere(), [&] { now.round->measure(); },
            [&] {
                int64_t in_flight = now.round->trials();
                if (trials + in_flight >= o_.trials) return;
                next = prepare(total_rounds(tasks_) + (in_flight > 0 ? 1 : 0), trials + in_flight,
                               now.step.task);
            });
    }

    // The step numbered `step` with `trials` spent or in flight, `in_flight` the task measuring
    // (-1: none): chosen among the live tasks, its round prepared; none when no task is live.
    std::optional<PreparedStep> prepare(int64_t step, int64_t trials, int in_flight) {
        std::vector<bool> live = live_tasks(tasks_, exhausted_, o_);
        if (!any(live)) return std::nullopt;
        PreparedStep p;
        p.step.step = step;
        std::tie(p.step.task, p.step.why) = chooser_.choose(live, step, in_flight);
        int64_t n = std::min<int64_t>(o_.measurements_per_round, o_.trials - trials);
        p.round = tasks_[p.step.task]->prepare_round(n);
        return p;
    }

    const std::vector<std::unique_ptr<SchedulableTask>>& tasks_;
    const std::vector<double>& weights_;
    const TaskSchedulerOptions& o_;
    Chooser chooser_;
    std::vector<bool> exhausted_;
};

}  // namespace

std::unique_ptr<TaskRound> SchedulableTask::prepare_round(int64_t max_trials) {
    return std::make_unique<DeferredRound>(*this, max_trials);
}

int64_t SchedulableTask::trials() const {
    std::vector<TaskRoundPoint> r = rounds();
    return r.empty() ? 0 : r.back().trials;
}

double SchedulableTask::best_seconds() const {
    std::vector<TaskRoundPoint> r = rounds();
    return r.empty() ? std::numeric_limits<double>::infinity() : r.back().best_seconds;
}

double weighted_latency(const std::vector<std::unique_ptr<SchedulableTask>>& tasks,
                        const std::vector<double>& weights) {
    double sum = 0;
    for (size_t i = 0; i < tasks.size(); ++i) sum += weights[i] * tasks[i]->best_seconds();
    return sum;
}

TaskSchedulerResult schedule_tasks(const std::vector<std::unique_ptr<SchedulableTask>>& tasks,
                                   const std::vector<double>& weights,
                                   const TaskSchedulerOptions& options,
                                   const std::function<void(const TaskSchedulerStep&)>& on_step) {
    check(tasks, weights, options);
    if (options.search_ahead) return AheadScheduler(tasks, weights, options).run(on_step);
    Chooser chooser(tasks, weights, options);
    std::vector<bool> exhausted(tasks.size(), false);
    TaskSchedulerResult result;
    int64_t trials = total_trials(tasks);
    while (true) {
        if (trials >= options.trials) {
            result.stop_reason = "trials";
            break;
        }
        if (options.should_stop && options.should_stop()) {
            result.stop_reason = "stopped";
            break;
        }
        std::vector<bool> live = live_tasks(tasks, exhausted, options);
        if (!any(live)) {
            result.stop_reason = "all_tasks_stopped";
            break;
        }
        TaskSchedulerStep step;
        step.step = total_rounds(tasks);
        std::tie(step.task, step.why) = chooser.choose(live, step.step);
        int64_t n = std::min<int64_t>(options.measurements_per_round, options.trials - trials);
        step.outcome = tasks[step.task]->tune_round(n);
        const bool go_on = finish_step(step, tasks, weights, exhausted, result, on_step);
        trials = step.trials;
        if (!go_on) break;
    }
    result.trials = trials;
    finish(tasks, weights, result);
    return result;
}

// --- TuningTask ---

std::string similarity_kind(const SearchTask& task) {
    if (task.workload_name().empty()) return "dag:" + task.dag_hash_hex();
    std::string out = task.workload_name() + "(";
    bool first = true;
    for (const WorkloadParam& p : task.params()) {
        if (param_kind(p) == ParamKind::Int) continue;
        out += (first ? "" : ", ") + param_to_string(p);
        first = false;
    }
    return out + ")";
}

TuningTask::TuningTask(const SearchTask& task, const TuningOptions& options)
    : tuner_(std::make_unique<internal::Tuner>(task, options)) {}

TuningTask::~TuningTask() = default;

std::string TuningTask::name() const {
    const SearchTask& t = tuner_->task();
    return t.workload_name().empty() ? "dag:" + t.dag_hash_hex() : t.workload_name();
}

std::string TuningTask::kind() const {
    return similarity_kind(tuner_->task());
}

double TuningTask::flops() const {
    return tuner_->flops();
}

std::vector<TaskRoundPoint> TuningTask::rounds() const {
    std::vector<TaskRoundPoint> out;
    ScheduleCosts costs;
    auto best = [&] {
        auto b = costs.best();
        return b ? b->seconds : std::numeric_limits<double>::infinity();
    };
    int64_t trials = 0, round = -1;
    for (const TuningRecord& r : tuner_->history().records) {
        if (r.round != round && trials > 0) out.push_back({trials, best()});
        round = r.round;
        trials += r.is_trial();
        costs.add(r);
    }
    if (trials > 0) out.push_back({trials, best()});
    return out;
}

int64_t TuningTask::trials_since_improvement() const {
    const internal::TuningHistory& h = tuner_->history();
    return h.trials() - h.last_improvement;
}

TaskRoundOutcome TuningTask::tune_round(int64_t max_trials) {
    int64_t before = tuner_->history().trials();
    tuner_->set_trials(before + max_trials);
    bool measured = tuner_->run_round();
    TaskRoundOutcome o;
    o.measured = tuner_->history().trials() - before;
    o.exhausted = !measured && tuner_->stop_reason() == "exhausted";
    return o;
}

namespace {

// A TuningTask's round: its tuner's prepared round, measured by the tuner's measure runner.
class TuningTaskRound : public TaskRound {
public:
    TuningTaskRound(internal::Tuner& tuner, int64_t max_trials)
        : tuner_(tuner), round_(tuner.prepare(max_trials)) {}
    ~TuningTaskRound() override {
        if (!done_) tuner_.discard(round_);
    }
    int64_t trials() const override { return static_cast<int64_t>(round_.batch.size()); }
    bool measures_elsewhere() const override { return tuner_.measures_elsewhere(); }
    void measure() override {
        if (!round_.batch.empty()) tuner_.measure(round_);
    }
    TaskRoundOutcome complete() override {
        done_ = true;
        if (round_.batch.empty()) {
            tuner_.discard(round_);
            tuner_.stop("exhausted");
            return {0, true};
        }
        int64_t before = tuner_.history().trials();
        tuner_.complete(round_);
        return {tuner_.history().trials() - before, false};
    }

private:
    internal::Tuner& tuner_;
    internal::PreparedRound round_;
    bool done_ = false;
};

}  // namespace

void TuningTask::check_best() {
    tuner_->check_best();
}

std::unique_ptr<TaskRound> TuningTask::prepare_round(int64_t max_trials) {
    return std::make_unique<TuningTaskRound>(*tuner_, max_trials);
}

const SearchTask& TuningTask::task() const {
    return tuner_->task();
}

TuningResult TuningTask::result() const {
    return tuner_->result();
}

}  // namespace tessel
