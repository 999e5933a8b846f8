// The task scheduler: several tasks share one trial budget (docs/daemon.md, "The task
// scheduler"). Each step picks one task and tunes it for one round; Ansor's gradient strategy
// picks the task whose next round should lower the objective, the weighted sum of the tasks'
// best latencies (weight: how often the network runs the task), the most.
//
//   std::vector<std::unique_ptr<SchedulableTask>> tasks = ...;   // TuningTask, or synthetic ones
//   TaskSchedulerOptions o;
//   o.trials = 128 * tasks.size();
//   TaskSchedulerResult r = schedule_tasks(tasks, weights, o);
//
// A step, until the tasks hold `trials` trials in all:
//  1. the live tasks: a task is dead once its search is exhausted or, with early_stopping_per_task,
//     once that many trials in a row have not improved its best time;
//  2. the choice: round-robin takes the live task with the fewest rounds (the lowest index on a
//     tie). Gradient first gives every task one round, in order; then with probability
//     eps_random a live task at random, else the one of the most negative gradient (a random one
//     when all gradients are equal), where for task i with weight w_i, best time g_i after t_i
//     rounds:
//       backward = (g_i(t_i) - g_i(t_i - W)) / W    (W = backward_window rounds; 0 before),
//       guess    = beta * flops_i / best GFLOP/s of i's similarity group (Ansor's; with
//                  fade_similarity_guess, g_i - (g_i - guess) / (1 + s_i), s_i = rounds since
//                  g_i last improved by 1 %),
//       forward  = min(g_i - g_i / t_i, guess) - g_i,
//       gradient = w_i * (alpha * backward + (1 - alpha) * forward);
//     the similarity group of a task is its kind (for a TuningTask, similarity_kind(): the
//     workload with its parameters other than sizes) with its FLOP count's bucket on a log
//     scale of base 1.618 (Ansor's similarity tag): tasks of one kind and size;
//  3. the round: at most measurements_per_round trials, fewer when the budget ends.
// Every input of a choice is derived from the tasks' histories (for TuningTask, from their logs),
// and the random draws from (seed, steps done), so a scheduler resumed from logs makes the choices
// the uninterrupted one made.
//
// Searching ahead (TaskSchedulerOptions::search_ahead): step s+1's task is chosen and its round
// prepared (searched) while step s's round measures, then step s's round is completed. The choice
// sees the tasks' rounds without step s's results (a task whose round is in flight counts it
// among its rounds for the warm-up and round-robin), the trials granted count step s's in
// flight, and the step number is one past step s's. A task chosen twice in a row prepares its
// second round without the first's candidates. The choices depend on the option alone; the
// preparation runs beside the measurement only where the round says it may
// (TaskRound::measures_elsewhere). A resumed job's first step is chosen and searched with every
// task's whole log (which task's round was in flight when it stopped is not in the logs).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "tessel/auto_schedule/tuner/Tuner.h"

namespace tessel {

/// The best time of a task after one of its rounds.
struct TaskRoundPoint {
    int64_t trials = 0;  ///< the task's trials after the round
    double best_seconds = std::numeric_limits<double>::infinity();
};

/// What one round of a task did.
struct TaskRoundOutcome {
    int64_t measured = 0;    ///< trials measured
    bool exhausted = false;  ///< the search found nothing more to measure
};

/// A round of a task prepared (searched) and not yet measured (SchedulableTask::prepare_round).
class TaskRound {
public:
    virtual ~TaskRound() = default;
    /// The trials it measures at most (what the scheduler counts in flight).
    virtual int64_t trials() const = 0;
    /// Whether measure() may run on another thread while the scheduler chooses and prepares the
    /// next round, of this task or another: its candidates are timed elsewhere
    /// (MeasureRunner::times_elsewhere), and measure() touches nothing a choice or a preparation
    /// reads.
    virtual bool measures_elsewhere() const { return false; }
    /// Measures its candidates, recording nothing.
    virtual void measure() = 0;
    /// Records what measure() measured and what follows (re-measurement, training): the round
    /// is done, in the task's rounds().
    virtual TaskRoundOutcome complete() = 0;
};

/// A task the scheduler can tune for one round. TuningTask tunes a SearchTask; tests plug in
/// tasks with known latency curves.
class SchedulableTask {
public:
    virtual ~SchedulableTask() = default;
    /// For reports: the workload name or the task key.
    virtual std::string name() const = 0;
    /// The similarity kind: tasks of one kind and a similar FLOP count form a group. Tasks of
    /// one kind should be able to run about as fast per FLOP: the guess that a task can reach
    /// its group's best FLOP/s (times 1 / beta) fades only while the task does not improve
    /// (TaskSchedulerOptions::fade_similarity_guess), so a task grouped with faster kinds of
    /// computation is chosen for a few rounds too many.
    virtual std::string kind() const = 0;
    /// Floating-point operations per run (0: unknown).
    virtual double flops() const = 0;
    /// The task's rounds so far, oldest first (a resumed task's include those of its log).
    virtual std::vector<TaskRoundPoint> rounds() const = 0;
    /// Trials since the best time last improved (all of them before any success).
    virtual int64_t trials_since_improvement() const = 0;
    /// Tunes one round of at most `max_trials` trials (> 0).
    virtual TaskRoundOutcome tune_round(int64_t max_trials) = 0;
    /// Prepares (searches) the task's next round of at most `max_trials` trials (> 0), to be
    /// measured and completed later (TaskSchedulerOptions::search_ahead); the task's rounds are
    /// completed in the order prepared, and one prepared while another is in flight leaves out
    /// its candidates. A round left uncompleted (destroyed) is forgotten. The default, for a task
    /// that cannot search ahead: a round whose complete() runs tune_round(max_trials).
    virtual std::unique_ptr<TaskRound> prepare_round(int64_t max_trials);
    /// Once the scheduling ends (not stopped): the task's final check (Tuner.h: a TuningTask
    /// times its fastest states and the default side by side, and the check decides its best).
    /// The default: nothing.
    virtual void check_best() {}

    int64_t trials() const;
    double best_seconds() const;
};

/// Options of schedule_tasks(). The gradient's parameters are Ansor's.
struct TaskSchedulerOptions {
    std::string strategy = "gradient";  ///< "gradient" or "round-robin"
    int64_t trials = 1000;              ///< the shared budget: trials of all tasks in all
    int measurements_per_round = 16;    ///< trials per round (the last may be smaller)
    double alpha = 0.2;                 ///< weight of the backward gradient
    double beta = 2.0;                  ///< the similarity guess's slack
    /// The gap between a task's best and its group's guess is divided by 1 + the rounds since
    /// the task last improved by 1 %: a task its group overrates (in ResNet-50, the 1 x 1
    /// stride-2 convolution with 2048 outputs: the FLOPs of two others, four to sixteen times
    /// their weights' bytes) stops drawing rounds once they stop paying. false: Ansor's guess,
    /// which never fades (that task took 1,392 of 3,072 trials in tune_network_cpu and gained
    /// nothing; docs/perf/tune-network-cpu.md).
    bool fade_similarity_guess = true;
    int backward_window = 3;   ///< rounds of the backward gradient
    double eps_random = 0.05;  ///< chance of a random task
    /// A task stops once this many of its trials in a row have not improved it (0: never).
    int64_t early_stopping_per_task = 0;
    /// Choose and prepare each step while the step before it measures (file comment).
    bool search_ahead = false;
    uint64_t seed = 0;  ///< of the random choices (each step's from it and the step)
    /// Asked before each step; true stops the scheduling there.
    std::function<bool()> should_stop;
};

/// One step of the scheduler, as given to the callback of schedule_tasks.
struct TaskSchedulerStep {
    int64_t step = 0;  ///< rounds of all tasks before this one
    int task = 0;      ///< the index of the task tuned
    std::string why;   ///< "warm-up", "gradient", "random", "round-robin"
    TaskRoundOutcome outcome;
    int64_t trials = 0;                                          ///< trials of all tasks after it
    double objective = std::numeric_limits<double>::infinity();  ///< after it
};

/// What schedule_tasks did.
struct TaskSchedulerResult {
    int64_t trials = 0;  ///< of all tasks, resumed ones included
    double objective = std::numeric_limits<double>::infinity();  ///< weighted sum of best times
    std::vector<TaskSchedulerStep> steps;                        ///< this run's
    /// "trials" (the budget is spent), "all_tasks_stopped" (every task dead) or "stopped".
    std::string stop_reason;
};

/// The objective: the weighted sum of the tasks' best times (infinity while one has none).
double weighted_latency(const std::vector<std::unique_ptr<SchedulableTask>>& tasks,
                        const std::vector<double>& weights);

/// Tunes `tasks` with `weights` (one each, > 0) until options.trials trials are spent (see the
/// file comment), then (unless should_stop stopped it) checks each task's best
/// (SchedulableTask::check_best); the result's objective is the one after the checks.
/// RuntimeError for bad options or weights. `on_step` is called after each step.
TaskSchedulerResult schedule_tasks(
    const std::vector<std::unique_ptr<SchedulableTask>>& tasks, const std::vector<double>& weights,
    const TaskSchedulerOptions& options,
    const std::function<void(const TaskSchedulerStep&)>& on_step = {});

namespace internal {
class Tuner;
}

/// A search task's similarity kind: its workload name with the parameters that are not sizes
/// (every parameter but integers: a convolution's kernel, stride, padding and dilation, a dense
/// layer's activation, dtypes), e.g. `op.conv2d_nchw([1,1], [2,2], [0,0,0,0], [1,1],
/// float32)`; a 1 x 1 convolution of stride 2, which reads its input strided, is not of
/// the kind of one of stride 1. A task made from a DAG is a kind of its own (`dag:<hash>`).
std::string similarity_kind(const SearchTask& task);

/// A search task tuned by the tuner (Tuner.h) one round at a time: its history is its log.
class TuningTask : public SchedulableTask {
public:
    /// `options.log_file` is the task's own log (read now: the resume); options.trials is
    /// ignored (the scheduler sets each round's). RuntimeError as tune().
    TuningTask(const SearchTask& task, const TuningOptions& options);
    ~TuningTask() override;

    std::string name() const override;
    std::string kind() const override;
    double flops() const override;
    std::vector<TaskRoundPoint> rounds() const override;
    int64_t trials_since_improvement() const override;
    TaskRoundOutcome tune_round(int64_t max_trials) override;
    std::unique_ptr<TaskRound> prepare_round(int64_t max_trials) override;
    void check_best() override;

    const SearchTask& task() const;
    /// The task's tuning as tune() reports it (best schedule, curve, this run's rounds).
    TuningResult result() const;

private:
    std::unique_ptr<internal::Tuner> tuner_;
};

}  // namespace tessel
