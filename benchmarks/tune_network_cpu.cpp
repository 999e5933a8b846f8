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
#include "tessel/Tolerance.h"
#include "tessel/auto_schedule/Job.h"
#include "tessel/codegen/Build.h"
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
    job.measurements_per_round = per_round;
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
        for (size_t j = 0; j < logs[i].size(); ++j)
            events.emplace_back(logs[i][j].timestamp, i, j);
    }
    std::sort(events.begin(), events.end());
    std::vector<ScheduleCosts> costs(search.size());
    Trace trace;
    auto point = [&] {
        double sum = 0;
        std::vector<int> ids;
        for (size_t i = 0; i < costs.size(); ++i) {
            auto b = costs[i].best();
            sum += job.tasks[i].weight *
                   (b ? b->seconds : std::numeric_limits<double>::infinity());
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

// oneDNN's OpenMP threads as many as tessel's (set before the library loads, by re-executing this
// program once). Both libraries keep their default waiting (their threads spin a while after a
// call); the comparison lets each one's threads settle before timing the other's
// (interleaved_median_ms).
void match_openmp_threads(char** argv) {
    if (std::getenv("OMP_NUM_THREADS")) return;
    std::string threads = std::to_string(ThreadPool::default_num_threads());
    setenv("OMP_NUM_THREADS", threads.c_str(), 1);
    execv("/proc/self/exe", argv);
    std::perror("bench_tune_network_cpu: re-exec failed; measuring with the current environment");
}

// --- One layer timed in one harness: tessel's best schedule and oneDNN. ---

int64_t product(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

std::vector<int64_t> shape_of(const Tensor& t) {
    std::vector<int64_t> s;
    for (const Expr& e : t.shape()) s.push_back(*as_const_int(e));
    return s;
}

struct LayerTiming {
    double tessel_ms = 0, onednn_ms = 0;
    bool ok = false;
};

// oneDNN's forward-inference primitive of the layer on `inputs` (plain layouts): its output
// (plain layout) in `out`, and the median milliseconds of `tessel` and of the primitive alone,
// timed alternately.
std::pair<double, double> onednn_layer(const JobTask& t,
                                       const std::vector<std::vector<float>>& inputs,
                                       std::vector<float>& out,
                                       const std::function<void()>& tessel, int runs) {
    using namespace dnnl;
    using tag = memory::format_tag;
    engine eng(engine::kind::cpu, 0);
    stream s(eng);
    const auto& p = t.params;
    auto integer = [&](size_t i) { return std::get<int64_t>(p[i]); };
    auto list = [&](size_t i) { return std::get<std::vector<int64_t>>(p[i]); };
    std::function<void()> work;
    std::vector<primitive> keep;
    std::vector<memory> mems;
    std::unordered_map<int, memory> args;
    memory user_dst;
    if (t.workload == "op.conv2d_nchw") {
        int64_t n = integer(0), c = integer(1), h = integer(2), w = integer(3), k = integer(4);
        auto kernel = list(5), stride = list(6), pad = list(7), dil = list(8);
        int64_t oh = (h + pad[0] + pad[2] - dil[0] * (kernel[0] - 1) - 1) / stride[0] + 1;
        int64_t ow = (w + pad[1] + pad[3] - dil[1] * (kernel[1] - 1) - 1) / stride[1] + 1;
        memory::dims src{n, c, h, w}, wei{k, c, kernel[0], kernel[1]}, dst{n, k, oh, ow};
        auto any = [](const memory::dims& d) {
            return memory::desc(d, memory::data_type::f32, tag::any);
        };
        convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct,
                                    any(src), any(wei), any(dst), {stride[0], stride[1]},
                                    {dil[0] - 1, dil[1] - 1}, {pad[0], pad[1]}, {pad[2], pad[3]});
        convolution_forward::primitive_desc pd(d, eng);
        memory user_src({src, memory::data_type::f32, tag::nchw}, eng,
                        const_cast<float*>(inputs[0].data()));
        memory user_wei({wei, memory::data_type::f32, tag::oihw}, eng,
                        const_cast<float*>(inputs[1].data()));
        user_dst = memory({dst, memory::data_type::f32, tag::nchw}, eng, out.data());
        memory src_m(pd.src_desc(), eng), wei_m(pd.weights_desc(), eng), dst_m(pd.dst_desc(), eng);
        reorder(user_src, src_m).execute(s, user_src, src_m);
        reorder(user_wei, wei_m).execute(s, user_wei, wei_m);
        convolution_forward conv(pd);
        args = {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, wei_m}, {DNNL_ARG_DST, dst_m}};
        work = [conv, &s, &args] { conv.execute(s, args), s.wait(); };
        work();
        reorder(dst_m, user_dst).execute(s, dst_m, user_dst);
    } else {  // op.dense: x (M, K), w (N, K), bias (N)
        int64_t m = integer(0), n = integer(1), k = integer(2);
        memory::dims src{m, k}, wei{n, k}, bias{n}, dst{m, n};
        inner_product_forward::desc d(prop_kind::forward_inference,
                                      memory::desc(src, memory::data_type::f32, tag::any),
                                      memory::desc(wei, memory::data_type::f32, tag::any),
                                      memory::desc(bias, memory::data_type::f32, tag::x),
                                      memory::desc(dst, memory::data_type::f32, tag::nc));
        inner_product_forward::primitive_desc pd(d, eng);
        memory user_src({src, memory::data_type::f32, tag::nc}, eng,
                        const_cast<float*>(inputs[0].data()));
        memory user_wei({wei, memory::data_type::f32, tag::oi}, eng,
                        const_cast<float*>(inputs[1].data()));
        memory bias_m({bias, memory::data_type::f32, tag::x}, eng,
                      const_cast<float*>(inputs[2].data()));
        memory src_m(pd.src_desc(), eng), wei_m(pd.weights_desc(), eng);
        user_dst = memory({dst, memory::data_type::f32, tag::nc}, eng, out.data());
        reorder(user_src, src_m).execute(s, user_src, src_m);
        reorder(user_wei, wei_m).execute(s, user_wei, wei_m);
        inner_product_forward ip(pd);
        args = {{DNNL_ARG_SRC, src_m},
                {DNNL_ARG_WEIGHTS, wei_m},
                {DNNL_ARG_BIAS, bias_m},
                {DNNL_ARG_DST, user_dst}};
        work = [ip, &s, &args] { ip.execute(s, args), s.wait(); };
        work();
    }
    s.wait();
    return interleaved_median_ms(tessel, work, 3, runs);
}

// Random inputs (never zeros) for a task's arguments, and its output last.
struct LayerArrays {
    std::vector<std::vector<float>> inputs;  // the inputs' values (oneDNN reads them too)
    std::vector<NDArray> arrays;             // the kernel's arguments
};

LayerArrays layer_arrays(const SearchTask& task) {
    LayerArrays a;
    std::vector<Tensor> args = task.dag().args();
    for (size_t i = 0; i < args.size(); ++i) {
        std::vector<int64_t> shape = shape_of(args[i]);
        a.arrays.push_back(NDArray::empty(shape, float32()));
        if (i + 1 < args.size()) {
            a.inputs.push_back(random_floats(static_cast<size_t>(product(shape)), 7 + uint32_t(i)));
            std::copy(a.inputs.back().begin(), a.inputs.back().end(),
                      static_cast<float*>(a.arrays.back().data()));
        }
    }
    return a;
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
    std::vector<LayerArrays> arrays;
    for (const SearchTask& task : search) arrays.push_back(layer_arrays(task));
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

LayerTiming time_layer(const JobTask& t, const SearchTask& task, const std::string& log, int runs) {
    LayerTiming r;
    RecordLog records = read_records(log);
    ScheduleCosts costs;  // the median of each schedule's measurements
    for (const TuningRecord& rec : records.records) costs.add(rec);
    if (!costs.best()) return r;
    Kernel k = build_schedule(task, records.records[costs.best()->record].schedule_json);
    LayerArrays a = layer_arrays(task);
    auto tessel_run = [&] { k(a.arrays); };
    tessel_run();
    std::vector<float> expected(static_cast<size_t>(product(a.arrays.back().shape())));
    std::tie(r.tessel_ms, r.onednn_ms) = onednn_layer(t, a.inputs, expected, tessel_run, runs);
    // The largest error against the output's RMS: each output is a sum of thousands of products
    // of random numbers, so an element-wise relative error is ill-conditioned where a sum falls
    // near zero (float32's rounding alone gave 0.019 there on a correct 3 x 3, 512-channel
    // kernel), while a wrong schedule is off by the order of the RMS itself.
    const float* got = static_cast<const float*>(a.arrays.back().data());
    double worst = 0, square_sum = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
        worst = std::max(worst, std::abs(double(got[i]) - expected[i]));
        square_sum += double(expected[i]) * expected[i];
    }
    worst /= std::sqrt(square_sum / double(std::max<size_t>(1, expected.size()))) + 1e-30;
    r.ok = worst < 1e-3;
    if (!r.ok)
        std::cerr << "  " << t.workload << ": tessel differs from oneDNN by " << worst
                  << " of the output RMS\n";
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    match_openmp_threads(argv);
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
    job.population = population;
    job.measure.min_repeat_ms = min_repeat_ms;
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
            j.seed = static_cast<uint64_t>(seed);
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
        LayerTiming t = time_layer(job.tasks[i], search[i], log, runs);
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
