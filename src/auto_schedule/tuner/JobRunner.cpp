// Running a tuning job (auto_schedule/tuner/Job.h): one TuningTask per task of the job, each with
// its own log in the job's log folder, all measuring through one MeasureRunner and (by default)
// choosing with one cost model, under the task scheduler.
#include <chrono>
#include <cmath>
#include <filesystem>

#include "tessel/auto_schedule/tuner/Job.h"

namespace tessel {

namespace {

using Clock = std::chrono::steady_clock;

TuningOptions task_options(const Job& job, const JobRunOptions& o, const SearchTask& task,
                           std::shared_ptr<MeasureRunner> runner) {
    TuningOptions t = job.tuning;
    t.trials = job.trials;  // the scheduler sets each round's
    t.log_file = (std::filesystem::path(o.log_dir) / task_log_name(task)).string();
    t.measure_runner = std::move(runner);
    t.verbose = 0;
    t.should_stop = o.should_stop;
    return t;
}

// "op.conv2d_nchw(1, 64, 56, 56, 64, [3, 3], ...)": the workload with its parameters; "dag:<hash>"
// for a task made from a DAG.
std::string task_label(const JobTask& t, const SearchTask& task) {
    if (!t.dag.empty()) return "dag:" + task.dag_hash_hex();
    std::string s = t.workload + "(";
    for (size_t i = 0; i < t.params.size(); ++i)
        s += (i ? ", " : "") + param_to_string(t.params[i]);
    return s + ")";
}

class ProgressTracker {
public:
    ProgressTracker(const Job& job, const std::vector<std::unique_ptr<SchedulableTask>>& tasks,
                    const std::vector<SearchTask>& search, const std::vector<std::string>& logs)
        : job_(job), tasks_(tasks), search_(search), logs_(logs) {
        resumed_ = now().trials;
    }

    JobProgress now() const {
        JobProgress p;
        p.job = job_.name;
        p.budget = job_.trials;
        p.resumed_trials = resumed_;
        std::vector<double> weights;
        for (size_t i = 0; i < tasks_.size(); ++i) {
            const SchedulableTask& t = *tasks_[i];
            std::vector<TaskRoundPoint> rounds = t.rounds();
            JobTaskProgress tp;
            tp.name = task_label(job_.tasks[i], search_[i]);
            tp.key = search_[i].key();
            tp.log_file = logs_[i];
            tp.weight = job_.tasks[i].weight;
            tp.flops = t.flops();
            tp.rounds = static_cast<int64_t>(rounds.size());
            if (!rounds.empty()) {
                tp.trials = rounds.back().trials;
                tp.best_seconds = rounds.back().best_seconds;
            }
            if (std::isfinite(tp.best_seconds) && tp.flops > 0)
                tp.best_gflops = tp.flops / tp.best_seconds / 1e9;
            p.trials += tp.trials;
            weights.push_back(tp.weight);
            p.tasks.push_back(std::move(tp));
        }
        p.weighted_latency = weighted_latency(tasks_, weights);
        p.elapsed_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
        int64_t done = p.trials - resumed_;
        if (done > 0 && p.elapsed_seconds > 0) {
            p.trials_per_second = static_cast<double>(done) / p.elapsed_seconds;
            p.eta_seconds = static_cast<double>(std::max<int64_t>(0, p.budget - p.trials)) /
                            p.trials_per_second;
        }
        return p;
    }

private:
    const Job& job_;
    const std::vector<std::unique_ptr<SchedulableTask>>& tasks_;
    const std::vector<SearchTask>& search_;
    const std::vector<std::string>& logs_;
    Clock::time_point start_ = Clock::now();
    int64_t resumed_ = 0;
};

}  // namespace

JobResult run_job(const Job& job, const JobRunOptions& o) {
    if (o.log_dir.empty()) TESSEL_THROW(RuntimeError) << "run_job: no log_dir";
    std::error_code ec;
    std::filesystem::create_directories(o.log_dir, ec);
    if (ec)
        TESSEL_THROW(RuntimeError)
            << "run_job: cannot create the log folder '" << o.log_dir << "': " << ec.message();
    std::shared_ptr<MeasureRunner> runner =
        o.measure_runner ? o.measure_runner
                         : std::make_shared<LocalMeasureRunner>(job.tuning.measure);
    std::vector<SearchTask> search = job_search_tasks(job);
    std::shared_ptr<SharedCostModel> model;
    std::vector<std::unique_ptr<SchedulableTask>> tasks;
    std::vector<std::string> logs;
    std::vector<double> weights;
    for (size_t i = 0; i < search.size(); ++i) {
        TuningOptions t = task_options(job, o, search[i], runner);
        // One model for all the tasks (Ansor's), the one a lone tuning with the tasks' options
        // makes: the tasks join it in job order, so its training set is ordered alike in every
        // run of the job.
        if (job.cost_model == "shared") {
            if (!model) model = std::make_shared<SharedCostModel>(tuning_model_options(t));
            t.shared_cost_model = model;
        }
        logs.push_back(t.log_file);
        weights.push_back(job.tasks[i].weight);
        tasks.push_back(std::make_unique<TuningTask>(search[i], t));  // reads its log
    }
    ProgressTracker tracker(job, tasks, search, logs);
    if (o.on_progress) o.on_progress(tracker.now());
    TaskSchedulerOptions so;
    so.strategy = job.strategy;
    so.trials = job.trials;
    so.measurements_per_round = job.tuning.measurements_per_round;
    so.early_stopping_per_task = job.early_stopping_per_task;
    so.seed = job.tuning.seed;
    so.search_ahead = job.tuning.search_ahead;
    so.should_stop = o.should_stop;
    JobResult r;
    r.schedule = schedule_tasks(tasks, weights, so, [&](const TaskSchedulerStep& step) {
        if (!o.on_progress) return;
        JobProgress p = tracker.now();
        p.last_step = step;
        o.on_progress(p);
    });
    r.progress = tracker.now();
    return r;
}

}  // namespace tessel
