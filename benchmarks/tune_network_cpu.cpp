// tune_network_cpu: the task scheduler on a real network (docs/daemon.md, "Benchmark"). The
// distinct conv2d and dense layers of ResNet-50 (batch 1, the operator library's preset) are
// tuned as one job, rounds of 16, a shared budget of 128 trials per task, by the gradient
// scheduler and by round-robin, two seeds each. Reported on the median curves (the mean of two
// seeds' weighted latencies at each trial count):
//   - the trials the gradient scheduler needs to reach round-robin's final weighted latency, as a
//     share of the budget (bar: <= 70 %);
//   - the final weighted latency of the best schedules, re-timed here in one harness, against
//     oneDNN's layers (the same shapes, its own blocked layouts chosen by format any, weights and
//     activations reordered outside the timing, as a framework keeps them); each tessel layer is
//     checked against oneDNN's output first (oneDNN's OpenMP threads wait passively: the
//     program re-executes itself once with OMP_WAIT_POLICY=passive).
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

// The weighted latency after every trial of a run, from its logs (the log is the truth: a run
// resumed or interrupted gives its whole curve): the tasks' records merged by time. A task's best
// is its fastest schedule by the median of its measurements (ScheduleCosts: the tuner re-measures
// the fastest); each trial's point comes after the re-measurements that follow it.
Curve curve_from_logs(const Job& job, const fs::path& dir) {
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
    Curve c;
    auto point = [&] {
        double sum = 0;
        for (size_t i = 0; i < costs.size(); ++i) {
            auto b = costs[i].best();
            sum += job.tasks[i].weight *
                   (b ? b->seconds : std::numeric_limits<double>::infinity());
        }
        c.trials.push_back(static_cast<int64_t>(c.trials.size()) + 1);
        c.objective.push_back(sum);
    };
    bool pending = false;
    for (auto [when, task, index] : events) {
        const TuningRecord& r = logs[task][index];
        if (r.is_trial() && pending) point();
        costs[task].add(r);
        pending = pending || r.is_trial();
    }
    if (pending) point();
    return c;
}

Curve run(const Job& job, const fs::path& dir) {
    JobRunOptions o;
    o.log_dir = dir.string();
    o.on_progress = [&](const JobProgress& p) {
        if (p.last_step)
            std::cerr << "  " << dir.filename().string() << ": " << p.trials << "/" << p.budget
                      << " trials, weighted latency " << p.weighted_latency * 1e3 << " ms\n";
    };
    run_job(job, o);
    return curve_from_logs(job, dir);
}

// oneDNN's OpenMP threads must not spin between runs (nor while tessel's kernels run): set
// before the library loads, by re-executing this program once.
void passive_openmp(char** argv) {
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    if (policy && std::string(policy) == "passive") return;
    setenv("OMP_WAIT_POLICY", "passive", 1);
    std::string threads = std::to_string(ThreadPool::default_num_threads());
    setenv("OMP_NUM_THREADS", threads.c_str(), 0);
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

// oneDNN's forward-inference primitive of the layer on `inputs` (plain layouts), its output
// (plain layout) in `out`, and the median milliseconds of the primitive alone.
double onednn_layer(const JobTask& t, const std::vector<std::vector<float>>& inputs,
                    std::vector<float>& out, int runs) {
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
    return median_ms(work, 3, runs);
}

LayerTiming time_layer(const JobTask& t, const SearchTask& task, const std::string& log, int runs) {
    LayerTiming r;
    RecordLog records = read_records(log);
    ScheduleCosts costs;  // the median of each schedule's measurements
    for (const TuningRecord& rec : records.records) costs.add(rec);
    if (!costs.best()) return r;
    const TuningRecord* best = &records.records[costs.best()->record];
    std::vector<Tensor> args = task.dag().args();
    Module m = build(task.apply_record(best->schedule_json), args, task.target());
    std::vector<std::vector<float>> inputs;
    std::vector<NDArray> arrays;
    for (size_t i = 0; i < args.size(); ++i) {
        std::vector<int64_t> shape = shape_of(args[i]);
        arrays.push_back(NDArray::empty(shape, float32()));
        if (i + 1 < args.size()) {
            inputs.push_back(random_floats(static_cast<size_t>(product(shape)), 7 + uint32_t(i)));
            std::copy(inputs.back().begin(), inputs.back().end(),
                      static_cast<float*>(arrays.back().data()));
        }
    }
    Kernel k = m.get("main");
    auto tessel_run = [&] { k(arrays); };
    tessel_run();
    std::vector<float> expected(static_cast<size_t>(product(shape_of(args.back()))));
    r.onednn_ms = onednn_layer(t, inputs, expected, runs);
    // The largest error against the output's RMS: each output is a sum of thousands of products
    // of random numbers, so an element-wise relative error is ill-conditioned where a sum falls
    // near zero (float32's rounding alone gave 0.019 there on a correct 3 x 3, 512-channel
    // kernel), while a wrong schedule is off by the order of the RMS itself.
    const float* got = static_cast<const float*>(arrays.back().data());
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
    r.tessel_ms = median_ms(tessel_run, 3, runs);
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    passive_openmp(argv);
    CLI::App app{"tune_network_cpu: the gradient task scheduler against round-robin on ResNet-50"};
    int tasks = 0, per_round = 16, seeds = 2, runs = 50, population = 2048;
    double min_repeat_ms = 100;
    int64_t per_task = 128;
    std::string dir = "build/bench/tune_network_cpu", target = "llvm -num-cores=2";
    app.add_option("--tasks", tasks, "only the first N layers (0: all 24)");
    app.add_option("--trials-per-task", per_task, "the shared budget per task");
    app.add_option("--per-round", per_round, "measurements per round");
    app.add_option("--seeds", seeds, "seeds per scheduler");
    app.add_option("--runs", runs, "timed runs per layer in the final comparison");
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
    std::map<std::string, std::vector<Curve>> curves;
    std::map<std::string, std::vector<fs::path>> dirs;
    for (int seed = 1; seed <= seeds; ++seed)
        for (const std::string& strategy : strategies) {
            Job j = job;
            j.strategy = strategy;
            j.seed = static_cast<uint64_t>(seed);
            fs::path d = fs::path(dir) / (strategy + "_seed" + std::to_string(seed));
            curves[strategy].push_back(run(j, d));
            dirs[strategy].push_back(d);
        }
    std::map<std::string, Curve> median;
    for (const std::string& strategy : strategies)
        median[strategy] = median_curve(curves[strategy]);
    const Curve& rr = median["round-robin"];
    const Curve& grad = median["gradient"];
    double rr_final = rr.objective.back();
    int64_t reached = -1;
    for (size_t i = 0; i < grad.trials.size(); ++i)
        if (grad.objective[i] <= rr_final) {
            reached = grad.trials[i];
            break;
        }
    std::cout << "# median weighted latency (ms) over trials\n# trials round-robin gradient\n";
    for (int64_t t = per_round; t <= job.trials; t += per_round)
        std::cout << t << " " << rr.at(t) * 1e3 << " " << grad.at(t) * 1e3 << "\n";
    double share = reached < 0 ? INFINITY : double(reached) / double(job.trials);
    std::cout << "round-robin final " << rr_final * 1e3 << " ms; gradient final "
              << grad.objective.back() * 1e3 << " ms, reaches round-robin's final after " << reached
              << " of " << job.trials << " trials (" << share * 100 << " %; bar <= 70 %)\n";

    // The best schedules of the gradient scheduler's first seed against oneDNN, one harness.
    std::vector<SearchTask> search = job_search_tasks(job);
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
              << " round_robin=" << job.trials << " ratio=" << share << "\n";
    std::cout << "BENCH tune_network_cpu weighted_latency_ms tessel=" << tessel_total
              << " onednn=" << onednn_total << " ratio=" << onednn_total / tessel_total << "\n";
    return 0;
}
