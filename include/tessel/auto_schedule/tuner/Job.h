// Tuning jobs: a target, a trial budget, and the tasks to share it (docs/daemon.md, "Jobs").
// `tessel-tune run JOB` and the daemon run them; ts.auto_schedule.extract_tasks writes them.
//
//   {"format_version": 1, "target": "llvm -num-cores=2", "trials": 2560,
//    "network": "resnet50",                                  // a preset (op/Networks.h), and/or
//    "tasks": [{"workload": "op.dense", "params": [128, 768, 768, 1, "none", "float32"],
//               "weight": 4}]}
//
//   Job job = load_job("resnet50.json");        // JobError listing every problem, before any work
//   JobRunOptions o;
//   o.log_dir = "tuning_logs/resnet50";         // one log per task in it
//   JobResult r = run_job(job, o);              // resumes from the logs; returns when done
//
// The job file's fields (only format_version, target, a budget and tasks or a network are
// required; unknown fields are problems, so a typo is not silently ignored):
//   name                      for reports (default: the file's name without .json)
//   target                    a target string (Target.h)
//   trials | trials_per_task  the shared budget, in all or per task
//   strategy                  "gradient" (default) or "round-robin" (TaskScheduler.h)
//   early_stopping_per_task   0 (never): a task stops after this many trials without improving
//   network                   a network preset: its distinct layers, weighted by their counts
//   constant_weights          false (default); true marks the network's weights constant (each
//                              layer's PresetLayer::weights: layout rewrite, docs/tuning.md)
//   layout                    "NCHW" (default) or "NCHW<b>c": the network's convolutions on
//                              blocked activations (op::blocked_layers, as from_onnx's layout)
//   tasks                     [{workload, params (a JSON array as workload_params_to_json writes
//                              it; a dtype may be a plain string), weight (default 1),
//                              constant (input names marked constant, default none)}]; or
//                             {dag (a DAG as dag_to_json writes it: a model's fused group),
//                              weight, constant}
//   measurements_per_round, seed
//                             TuningOptions' fields of that name (kJobTop; 16 rounds a job)
//   search                    TuningOptions' search fields (kJobSearch: population, generations,
//                              mutation_prob, eps_greedy, remeasure_top, remeasure_limit,
//                              measure_default, restart_after, num_threads, min_programs), and
//                              cost_model: "shared" (default: one model for all the tasks,
//                              SharedCostModel) or "per-task"
//   measure                   MeasureOptions' fields (kJobMeasure: number, repeat, min_repeat_ms,
//                              flush_cache, build_timeout, run_timeout, build_threads)
//   cluster                   measure on a Ray cluster (docs/distributed.md): {"address": the
//                              head's HOST:PORT or "auto", "fallback": "local" (default), "wait"
//                              or "fail", "build": where candidates are built, "auto" (default),
//                              "daemon" or "nodes"}, or the address alone as a string;
//                              tessel-tune's --cluster, --cluster-fallback and --cluster-build
//                              override it
// Those TuningOptions and MeasureOptions fields are described once, in their structs
// (TuningOptions::fields, MeasureOptions::fields); `tessel-tune run` takes each as a flag too.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessel/Error.h"
#include "tessel/auto_schedule/measure/MeasureRunner.h"
#include "tessel/auto_schedule/task/Workload.h"
#include "tessel/auto_schedule/tuner/TaskScheduler.h"
#include "tessel/auto_schedule/tuner/Tuner.h"

namespace tessel {

/// The job format version this tessel writes and reads.
constexpr int kJobFormatVersion = 1;
/// Job files longer than this are refused unread.
constexpr size_t kMaxJobBytes = size_t(4) << 20;

/// A job refused: every problem found, each naming its field.
class JobError : public RuntimeError {
public:
    JobError(const std::string& source, std::vector<std::string> problems);
    const std::vector<std::string>& problems() const { return problems_; }

private:
    std::vector<std::string> problems_;
};

/// One task of a job.
struct JobTask {
    std::string workload;  ///< a registered workload
    WorkloadParams params;
    double weight = 1;  ///< how often the workload runs (the objective's weight)
    /// Inputs the task marks constant (weights, SearchTask's `constant`): the layout-rewrite
    /// option. Empty: off.
    std::vector<std::string> constant;
    /// A task made from a DAG instead of a workload (a model's fused operator group, written by
    /// ts.auto_schedule.extract_tasks): the DAG as dag_to_json writes it, its constant inputs
    /// marked; `workload` and `params` are then empty.
    std::string dag;
};

/// Where a job measures: this machine, or a Ray cluster (the job file's `cluster`).
struct JobCluster {
    /// The Ray head's "HOST:PORT" (or "ray://HOST:PORT"), or "auto"; empty: this machine.
    std::string address;
    /// When the cluster is lost: "local", "wait" or "fail" (ClusterFallback's names).
    std::string fallback = "local";
    /// Where candidates are built: "auto", "daemon" or "nodes" (ClusterBuild's names).
    std::string build = "auto";
};

/// The tuning options a job starts from: TuningOptions' defaults, 16 measurements a round.
TuningOptions job_tuning_defaults();

/// A checked job (see the file comment for the fields).
struct Job {
    std::string name;
    std::string target;
    int64_t trials = 0;  ///< the shared budget (trials_per_task x tasks when given so)
    std::string strategy = "gradient";
    int64_t early_stopping_per_task = 0;
    std::string network;            ///< the preset it named ("" for none); its layers are in tasks
    bool constant_weights = false;  ///< the network's layers take their weights as constant
    std::string layout = "NCHW";    ///< the network's activation layout ("NCHW<b>c": blocked)
    std::vector<JobTask> tasks;     ///< the network's layers first, then the listed tasks
    std::string cost_model = "shared";  ///< "shared" or "per-task"
    JobCluster cluster;                 ///< where it measures (the file's `cluster`)
    /// Each task's tuning: the job file's kJobTop and kJobSearch fields, and in `tuning.measure`
    /// its kJobMeasure ones (trials, log_file and the callbacks are the job runner's).
    TuningOptions tuning = job_tuning_defaults();
};

/// Parses and checks a job: the JSON, every field, every workload and its parameters (built
/// once), the target. JobError listing every problem, `source` naming the job in its message.
Job parse_job(const std::string& text, const std::string& source = "job");
/// Reads and parses the job file at `path` (name defaults to the file's stem); JobError when it
/// cannot be read, is too large, or has problems. `overrides`, a JSON object in the job's shape
/// (`{"seed": 3, "search": {"population": 64}}`: tessel-tune run's flags), is merged over the
/// file's object first (RFC 7386), and checked with it.
Job load_job(const std::string& path, const std::string& overrides = "{}");
/// The job as JSON that parse_job reads back to an equal job (the network's layers as tasks).
std::string job_to_json(const Job& job);

/// The search task of each of the job's tasks, in order.
std::vector<SearchTask> job_search_tasks(const Job& job);
/// The name of a task's log in a job's log folder: `<workload>-<16 hex digits of its key's hash>
/// .jsonl` (stable across runs and task orders).
std::string task_log_name(const SearchTask& task);

/// Where one task of a running job stands.
struct JobTaskProgress {
    std::string name;  ///< workload name
    std::string key;   ///< SearchTask::key()
    std::string log_file;
    double weight = 1;
    double flops = 0;
    int64_t trials = 0;
    int64_t rounds = 0;
    double best_seconds = std::numeric_limits<double>::infinity();
    double best_gflops = 0;
};

/// Where a running job stands, as given to JobRunOptions::on_progress.
struct JobProgress {
    std::string job;
    int64_t trials = 0;          ///< of all tasks, resumed ones included
    int64_t budget = 0;          ///< Job::trials
    int64_t resumed_trials = 0;  ///< in the logs when this run started
    double weighted_latency = std::numeric_limits<double>::infinity();  ///< the objective
    double elapsed_seconds = 0;                                         ///< of this run
    double trials_per_second = 0;                                       ///< this run's rate
    double eta_seconds = std::numeric_limits<double>::quiet_NaN();
    std::vector<JobTaskProgress> tasks;
    std::optional<TaskSchedulerStep> last_step;
};

/// How to run a job.
struct JobRunOptions {
    std::string log_dir;  ///< required: the job's logs, one per task (created if missing)
    /// Asked before each round and between its search and its measurement.
    std::function<bool()> should_stop;
    /// Called once at the start and after every round.
    std::function<void(const JobProgress&)> on_progress;
    /// Where candidates are measured; none: one LocalMeasureRunner shared by the tasks.
    std::shared_ptr<MeasureRunner> measure_runner;
};

/// What run_job did.
struct JobResult {
    TaskSchedulerResult schedule;
    JobProgress progress;  ///< at the end
};

/// Runs `job` (resuming from the logs in options.log_dir) until its budget is spent, every task
/// has stopped, or should_stop says so. RuntimeError as tune() (a log of another task, no
/// worker program, ...).
JobResult run_job(const Job& job, const JobRunOptions& options);

}  // namespace tessel
