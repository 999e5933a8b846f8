// tune_network_cpu: the task scheduler on a real network (docs/daemon.md, "Benchmark"). The
// distinct conv2d and dense layers of ResNet-50 (batch 1, the operator library's preset) are
// tuned as one job, rounds of 16, a shared budget of 128 trials per task, by the gradient
// scheduler and by round-robin, two seeds each. Reported on the median curves (the mean of two
// seeds' weighted latencies at each trial count):
//   - the trials the gradient scheduler needs to reach round-robin's final weighted latency, as a
//     share of the budget (bar: <= 70 %), on the curves of costs re-timed together at the end
//     (every schedule some run deployed at some point, interleaved: see Deployed) and, for
//     reference, on the curves as logged;
//   - the final weighted latency of the gradient scheduler's best schedules against oneDNN's
//     layers, timed alternately in one harness (the same shapes, oneDNN's own blocked layouts
//     chosen by format any, weights and activations reordered outside the timing, as a framework
//     keeps them); each tessel layer is checked against oneDNN's output first. Both libraries
//     wait for work their default way (their threads spin a while after a call); each sample of
//     one follows 100 ms of its own untimed calls, so that the other's threads have stopped
//     (oneDNN gets tessel's thread count: the program re-executes itself once with
//     OMP_NUM_THREADS set).
//
//   benchmarks/run.sh tune_network_cpu                                      # the figures (hours)
//   benchmarks/run.sh tune_network_cpu --tasks 3 --trials-per-task 32 --per-round 8
//       --population 128 --min-repeat-ms 20                    # (one line) a quick check
//
// Logs go to --dir (default build/bench/tune_network_cpu/<strategy>_seed<n>/), one per task: a
// run interrupted is resumed from them (delete the folder to start afresh).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <tuple>

#include "support/BenchUtil.h"
#include "support/OneDnnLayers.h"
#include "tessel/Tolerance.h"
#include "tessel/auto_schedule/tuner/Job.h"
#include "tessel/driver/Build.h"
#include "tessel/runtime/NDArray.h"
#include "tessel/runtime/ThreadPool.h"

using namespace tessel;
namespace fs = std::filesystem;

namespace {

struct Curve {
    std::vector<int64_t> trials;  // after each step
    std::vector<double> objective;
    double at(int64_t t) const {  // the weighted latency after `t` trials (step function)
        double v = std::numeric_limits<double>::infinity();
        for (size_t i = 0; i < trials.size() && trials[i] <= t; ++i) v = objective[i];
        return v;
    }
};

Job network_job(int tasks, int64_t per_task, int per_round, const std::string& target) {
    Job job = parse_job(R"({"format_version": 1, "target": ")" + target +
                            R"(", "trials": 1, "network": "resnet50"})",
                        "tune_network_cpu");
    std::vector<JobTask> kept;
    for (const JobTask& t : job.tasks)
        if (t.workload == "op.conv2d_nchw" || t.workload == "op.dense") kept.push_back(t);
    if (tasks > 0 && tasks < static_cast<int>(kept.size())) kept.resize(static_cast<size_t>(tasks));
    job.tasks = kept;
    job.trials = per_task * static_cast<int64_t>(kept.size());
    job.tuning.measurements_per_round = per_round;
    return job;
}

// The median curve of two or more runs: the mean weighted latency at every trial count where
// one of them steps (with two runs the median is their mean).
// The first trial count at which `c` is at or below `target`; -1 if never.
int64_t trials_to_reach(const Curve& c, double target) {
    for (size_t i = 0; i < c.trials.size(); ++i)
        if (c.objective[i] <= target) return c.trials[i];
    return -1;
}

Curve median_curve(const std::vector<Curve>& runs) {
    std::vector<int64_t> points;
    for (const Curve& c : runs) points.insert(points.end(), c.trials.begin(), c.trials.end());
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    Curve m;
    for (int64_t t : points) {
        std::vector<double> v;
        for (const Curve& c : runs) v.push_back(c.at(t));
        std::sort(v.begin(), v.end());
        double med = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
        m.trials.push_back(t);
        m.objective.push_back(med);
    }
    return m;
}

// The schedules some run would deploy at some point (a task's fastest by its log), each re-timed
// at the end in one harness: the logged costs were measured minutes to hours apart, under
// whatever else ran then (a layer's default schedule logged at 1.84 and 0.95 ms by one run), and
// a logged best is the fastest of noisy readings, so curves of runs made at different times
// compare only through costs measured together.
struct Deployed {
    std::vector<std::map<std::string, int>> ids;       // per task: schedule JSON -> id
    std::vector<std::pair<size_t, std::string>> list;  // id -> (task, schedule JSON)
    std::vector<double> seconds;                       // id -> re-timed (retime())

    int id(size_t task, const std::string& schedule_json) {
        if (ids.size() <= task) ids.resize(task + 1);
        auto [it, fresh] = ids[task].emplace(schedule_json, static_cast<int>(list.size()));
        if (fresh) list.emplace_back(task, schedule_json);
        return it->second;
    }
};

// One run read from its logs: the weighted latency after every trial as logged, and what each
// task would deploy then (an id of Deployed; -1 while it has no successful schedule).
struct Trace {
    Curve logged;
    std::vector<std::vector<int>> deployed;  // per point of `logged`: per task
};

// The points of a run from its logs (the log is the truth: a run resumed or interrupted gives its
// whole curve): the tasks' records merged by time. A task's best is its fastest schedule by the
// median of its measurements (ScheduleCosts: the tuner re-measures the fastest); each trial's
// point comes after the re-measurements that follow it.
Trace trace_from_logs(const Job& job, const fs::path& dir, Deployed& deployed) {
    std::vector<SearchTask> search = job_search_tasks(job);
    std::vector<std::vector<TuningRecord>> logs;
    std::vector<std::tuple<double, size_t, size_t>> events;  // (time, task, record)
    for (size_t i = 0; i < search.size(); ++i) {
        logs.push_back(read_records((dir / task_log_name(search[i])).string()).records);
        for (size_t j = 0; j < logs[i].size(); ++j) events.emplace_back(logs[i][j].timestamp, i, j);
    }
    std::sort(events.begin(), events.end());
    std::vector<ScheduleCosts> costs(search.size());
    Trace trace;
    auto point = [&] {
        double sum = 0;
        std::vector<int> ids;
        for (size_t i = 0; i < costs.size(); ++i) {
            auto b = costs[i].best();
            sum += job.tasks[i].weight * (b ? b->seconds : std::numeric_limits<double>::infinity());
            ids.push_back(b ? deployed.id(i, logs[i][b->record].schedule_json) : -1);
        }
        trace.logged.trials.push_back(static_cast<int64_t>(trace.logged.trials.size()) + 1);
        trace.logged.objective.push_back(sum);
        trace.deployed.push_back(std::move(ids));
    };
    bool pending = false;
    for (auto [when, task, index] : events) {
        const TuningRecord& r = logs[task][index];
        if (r.is_trial() && pending) point();
        costs[task].add(r);
        pending = pending || r.is_trial();
    }
    if (pending) point();
    return trace;
}

// The run's curve with every deployed schedule's re-timed cost in place of its logged one.
Curve retimed_curve(const Job& job, const Trace& trace, const Deployed& deployed) {
    Curve c;
    c.trials = trace.logged.trials;
    for (const std::vector<int>& ids : trace.deployed) {
        double sum = 0;
        for (size_t i = 0; i < ids.size(); ++i)
            sum += job.tasks[i].weight * (ids[i] < 0 ? std::numeric_limits<double>::infinity()
                                                     : deployed.seconds[size_t(ids[i])]);
        c.objective.push_back(sum);
    }
    return c;
}

void run(const Job& job, const fs::path& dir) {
    JobRunOptions o;
    o.log_dir = dir.string();
    o.on_progress = [&](const JobProgress& p) {
        if (p.last_step)
            std::cerr << "  " << dir.filename().string() << ": " << p.trials << "/" << p.budget
                      << " trials, weighted latency " << p.weighted_latency * 1e3 << " ms\n";
    };
    run_job(job, o);
}

Kernel build_schedule(const SearchTask& task, const std::string& schedule_json) {
    return build(task.apply_record(schedule_json), task.dag().args(), task.target()).get("main");
}

// Re-times every deployed schedule in one harness: each built once, then `rounds` rounds over
// all of them, one sample of each per round (as many calls as fill 5 ms, at least one), the
// median of its samples. The rounds interleave every run's schedules, so a slow spell of the
// machine falls on all runs alike.
void retime(const std::vector<SearchTask>& search, Deployed& d, int rounds) {
    std::cerr << "tune_network_cpu: re-timing " << d.list.size() << " deployed schedules\n";
    std::vector<bench::LayerArrays> arrays;
    for (const SearchTask& task : search) arrays.push_back(bench::layer_arrays(task));
    std::vector<Kernel> kernels;
    std::vector<int> calls;
    for (const auto& [task, json] : d.list) {
        kernels.push_back(build_schedule(search[task], json));
        const Kernel& k = kernels.back();
        k(arrays[task].arrays);  // the first call touches the pages
        double once = seconds_of([&] { k(arrays[task].arrays); });
        calls.push_back(static_cast<int>(std::clamp(std::ceil(5e-3 / once), 1.0, 1e4)));
    }
    std::vector<std::vector<double>> samples(d.list.size());
    for (int r = 0; r < rounds; ++r)
        for (size_t id = 0; id < d.list.size(); ++id) {
            const Kernel& k = kernels[id];
            const std::vector<NDArray>& a = arrays[d.list[id].first].arrays;
            int n = calls[id];
            samples[id].push_back(seconds_of([&] {
                                      for (int c = 0; c < n; ++c) k(a);
                                  }) /
                                  n);
        }
    d.seconds.clear();
    for (const std::vector<double>& s : samples) d.seconds.push_back(median(s));
}

// The best schedule of a task's log (by the median of its measurements) against oneDNN.
bench::LayerTiming time_best(const JobTask& t, const SearchTask& task, const std::string& log,
                             int runs) {
    RecordLog records = read_records(log);
    ScheduleCosts costs;
    for (const TuningRecord& rec : records.records) costs.add(rec);
    if (!costs.best()) return {};
    return bench::time_layer(
        t, task, task.apply_record(records.records[costs.best()->record].schedule_json), runs);
}

}  // namespace

int main(int argc, char** argv) {
    bench::match_openmp_threads(argv);
    CLI::App app{"tune_network_cpu: the gradient task scheduler against round-robin on ResNet-50"};
    int tasks = 0, per_round = 16, seeds = 2, runs = 31, population = 2048, retime_rounds = 31;
    double min_repeat_ms = 100;
    int64_t per_task = 128;
    std::string dir = "build/bench/tune_network_cpu", target = "llvm -num-cores=2";
    app.add_option("--tasks", tasks, "only the first N layers (0: all 24)");
    app.add_option("--trials-per-task", per_task, "the shared budget per task");
    app.add_option("--per-round", per_round, "measurements per round");
    app.add_option("--seeds", seeds, "seeds per scheduler");
    app.add_option("--runs", runs, "timed samples per layer in the final comparison");
    app.add_option("--retime-rounds", retime_rounds,
                   "rounds over the deployed schedules when re-timing them");
    app.add_option("--dir", dir, "the logs' folder");
    app.add_option("--target", target, "the target");
    app.add_option("--population", population, "the evolutionary search's population");
    app.add_option("--min-repeat-ms", min_repeat_ms, "the timing of a candidate");
    CLI11_PARSE(app, argc, argv);
    Job job = network_job(tasks, per_task, per_round, target);
    job.tuning.population = population;
    job.tuning.measure.min_repeat_ms = min_repeat_ms;
    std::cerr << "tune_network_cpu: " << job.tasks.size() << " layers, " << job.trials
              << " trials per run, rounds of " << per_round << ", " << seeds << " seeds\n";
    // Seed by seed, both schedulers at each seed: an interrupted benchmark (it takes hours) has
    // comparable runs of both first.
    const std::vector<std::string> strategies = {"round-robin", "gradient"};
    std::map<std::string, std::vector<fs::path>> dirs;
    for (int seed = 1; seed <= seeds; ++seed)
        for (const std::string& strategy : strategies) {
            Job j = job;
            j.strategy = strategy;
            j.tuning.seed = static_cast<uint64_t>(seed);
            fs::path d = fs::path(dir) / (strategy + "_seed" + std::to_string(seed));
            run(j, d);
            dirs[strategy].push_back(d);
        }
    // Every run read from its logs, then what they deploy re-timed together.
    std::vector<SearchTask> search = job_search_tasks(job);
    Deployed deployed;
    std::map<std::string, std::vector<Trace>> traces;
    for (const std::string& strategy : strategies)
        for (const fs::path& d : dirs[strategy])
            traces[strategy].push_back(trace_from_logs(job, d, deployed));
    retime(search, deployed, retime_rounds);
    std::map<std::string, Curve> logged, retimed;  // the median curves
    for (const std::string& strategy : strategies) {
        std::vector<Curve> l, r;
        for (const Trace& t : traces[strategy]) {
            l.push_back(t.logged);
            r.push_back(retimed_curve(job, t, deployed));
        }
        logged[strategy] = median_curve(l);
        retimed[strategy] = median_curve(r);
    }
    std::cout << "# median weighted latency (ms) over trials: as logged, and re-timed together\n"
                 "# trials round-robin gradient round-robin(re-timed) gradient(re-timed)\n";
    for (int64_t t = per_round; t <= job.trials; t += per_round)
        std::cout << t << " " << logged["round-robin"].at(t) * 1e3 << " "
                  << logged["gradient"].at(t) * 1e3 << " " << retimed["round-robin"].at(t) * 1e3
                  << " " << retimed["gradient"].at(t) * 1e3 << "\n";
    auto share = [&](std::map<std::string, Curve>& m, const std::string& how) {
        const Curve& rr = m["round-robin"];
        const Curve& grad = m["gradient"];
        int64_t reached = trials_to_reach(grad, rr.objective.back());
        double s = reached < 0 ? INFINITY : double(reached) / double(job.trials);
        std::cout << how << ": round-robin final " << rr.objective.back() * 1e3
                  << " ms; gradient final " << grad.objective.back() * 1e3
                  << " ms, reaches round-robin's final after " << reached << " of " << job.trials
                  << " trials (" << s * 100 << " %; bar <= 70 %)\n";
        return std::make_pair(reached, s);
    };
    auto [reached_logged, share_logged] = share(logged, "as logged");
    auto [reached, share_retimed] = share(retimed, "re-timed");

    // The best schedules of the gradient scheduler's first seed against oneDNN, one harness.
    double tessel_total = 0, onednn_total = 0;
    bool all_ok = true;
    for (size_t i = 0; i < job.tasks.size(); ++i) {
        std::string log = (dirs["gradient"][0] / task_log_name(search[i])).string();
        bench::LayerTiming t = time_best(job.tasks[i], search[i], log, runs);
        all_ok = all_ok && t.ok;
        tessel_total += job.tasks[i].weight * t.tessel_ms;
        onednn_total += job.tasks[i].weight * t.onednn_ms;
        std::cout << "layer " << i << " x" << job.tasks[i].weight << ": tessel " << t.tessel_ms
                  << " ms, oneDNN " << t.onednn_ms << " ms" << (t.ok ? "" : " (MISMATCH)") << "\n";
    }
    if (!all_ok) {
        std::cerr << "tune_network_cpu: a tuned layer differs from oneDNN\n";
        return 1;
    }
    std::cout << "BENCH tune_network_cpu trials_to_round_robin_final gradient=" << reached
              << " round_robin=" << job.trials << " ratio=" << share_retimed << "\n";
    std::cout << "BENCH tune_network_cpu trials_to_round_robin_final_as_logged gradient="
              << reached_logged << " round_robin=" << job.trials << " ratio=" << share_logged
              << "\n";
    std::cout << "BENCH tune_network_cpu weighted_latency_ms tessel=" << tessel_total
              << " onednn=" << onednn_total << " ratio=" << onednn_total / tessel_total << "\n";
    return 0;
}
