// Benchmark: the distinct 3x3 and 1x1 conv2d layers of ResNet-50 (the operator library's
// `resnet50` preset: batch 1, NCHW float32) on the CPU, tessel against oneDNN's convolution, both
// on 2 threads (TESSEL_NUM_THREADS and OMP_NUM_THREADS, default 2; set before the libraries load,
// by re-exec, with OMP_WAIT_POLICY=passive so that oneDNN's threads do not spin while tessel runs).
// Four tessel kernels per layer: the default rules (op::default_schedule_rules, no tuning) and the
// tuned schedule as a user gets it (op::default_schedule: the shipped tuning logs' record,
// tuning_logs/, when they hold one for this machine's target; else the rules again), both with
// the weight packed inside every call; then both with the weight constant, "prepacked" and
// "tuned+prepacked" (docs/tuning.md, "Constant operands and layout rewrite"): a pack runs once,
// by the module's pre_transform, outside the timing, as oneDNN's weight reorder does, and the
// tuned one takes the shipped record of the task with the constant weight. The one-time costs
// are printed per layer.
//
// oneDNN is configured as a framework uses it for inference: NCHW source and destination, weights
// in its preferred layout (format_tag::any) reordered once outside the timing. Each layer's
// outputs are first checked on sampled entries against a double-precision direct convolution of
// the same random (non-zero) inputs; then the five run interleaved, one run of each per round,
// after warm-up runs, and the median of the rounds counts.
//
//   bench_conv2d_cpu [--rounds N] [--layer I]
//
// Prints one line per layer, then `BENCH conv2d_cpu <case> tessel=<GFLOP/s> onednn=<GFLOP/s>
// ratio=<x>` per layer for the rules, `<case>,tuned`, `<case>,prepacked` and
// `<case>,tuned_prepacked`, `<case>,weight_transform` (the one-time costs), and `BENCH conv2d_cpu
// geomean ...` with the same suffixes, the geometric means (the ratio's is the geometric mean of
// the ratios; bars: the rules >= 0.3, issue 21; tuned >= 0.8, issue 24).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "support/BenchUtil.h"
#include "tessel/Target.h"
#include "tessel/auto_schedule/records/ShippedLogs.h"
#include "tessel/auto_schedule/task/SearchTask.h"
#include "tessel/auto_schedule/task/Workload.h"
#include "tessel/driver/Build.h"
#include "tessel/driver/DefaultSchedule.h"
#include "tessel/op/Networks.h"
#include "tessel/runtime/NDArray.h"
#include "tessel/runtime/ThreadPool.h"

using namespace tessel;

namespace {

// One conv2d layer of the preset: x (1, c, h, w), weights (k, c, r, s), stride, padding p.
struct Layer {
    int64_t c, h, w, k, r, s, stride, pad;
    int count;
    WorkloadParams params;
    int64_t oh() const { return (h + 2 * pad - r) / stride + 1; }
    int64_t ow() const { return (w + 2 * pad - s) / stride + 1; }
    double flops() const { return 2.0 * double(k * oh() * ow()) * double(c * r * s); }
    std::string name() const {
        return "c" + std::to_string(c) + "_h" + std::to_string(h) + "_k" + std::to_string(k) + "_" +
               std::to_string(r) + "x" + std::to_string(s) + "_s" + std::to_string(stride);
    }
};

// The distinct 3x3 and 1x1 conv2d layers of the resnet50 preset (the 7x7 stem left out).
std::vector<Layer> resnet_layers() {
    std::vector<Layer> layers;
    for (const op::PresetLayer& l : op::network_preset("resnet50")) {
        if (l.workload != "op.conv2d_nchw") continue;
        const WorkloadParams& p = l.params;
        auto integer = [&](size_t i) { return std::get<int64_t>(p[i]); };
        auto list = [&](size_t i) { return std::get<std::vector<int64_t>>(p[i]); };
        std::vector<int64_t> kernel = list(5), stride = list(6), pad = list(7), dil = list(8);
        if (kernel[0] != kernel[1] || (kernel[0] != 1 && kernel[0] != 3)) continue;
        if (integer(0) != 1 || integer(9) != 1 || dil[0] != 1 || dil[1] != 1 ||
            stride[0] != stride[1] || pad[0] != pad[1] || pad[0] != pad[2] || pad[0] != pad[3]) {
            std::fprintf(stderr, "bench_conv2d_cpu: unexpected preset layer\n");
            std::exit(2);
        }
        layers.push_back(Layer{integer(1), integer(2), integer(3), integer(4), kernel[0], kernel[1],
                               stride[0], pad[0], l.count, p});
    }
    return layers;
}

// Checks `out` (NCHW) on 2048 sampled entries against a double-precision direct convolution;
// returns an empty string or what differs. Bound: fp32 rounding of a sum of c*r*s products.
std::string check_sampled(const Layer& l, const std::vector<float>& x, const std::vector<float>& w,
                          const float* out) {
    std::mt19937 rng(11);
    const int64_t oh = l.oh(), ow = l.ow();
    std::uniform_int_distribution<int64_t> pick(0, l.k * oh * ow - 1);
    for (int i = 0; i < 2048; ++i) {
        int64_t idx = pick(rng), ko = idx / (oh * ow), y = idx / ow % oh, xo = idx % ow;
        double sum = 0, magnitude = 0;
        for (int64_t c = 0; c < l.c; ++c)
            for (int64_t r = 0; r < l.r; ++r)
                for (int64_t s = 0; s < l.s; ++s) {
                    int64_t iy = y * l.stride - l.pad + r, ix = xo * l.stride - l.pad + s;
                    if (iy < 0 || iy >= l.h || ix < 0 || ix >= l.w) continue;
                    double a = x[size_t((c * l.h + iy) * l.w + ix)];
                    double b = w[size_t(((ko * l.c + c) * l.r + r) * l.s + s)];
                    sum += a * b;
                    magnitude += std::abs(a * b);
                }
        double bound = 1e-6 * double(l.c * l.r * l.s) * magnitude + 1e-6;
        if (!(std::abs(out[idx] - sum) <= bound))
            return "entry (" + std::to_string(ko) + ", " + std::to_string(y) + ", " +
                   std::to_string(xo) + ") is " + std::to_string(out[idx]) + ", expected " +
                   std::to_string(sum);
    }
    return "";
}

// oneDNN's forward-inference convolution of a layer: NCHW source and destination (user memory),
// weights reordered once into the layout the primitive prefers.
struct OneDNNConv {
    dnnl::engine eng{dnnl::engine::kind::cpu, 0};
    dnnl::stream strm{eng};
    dnnl::convolution_forward conv;
    std::unordered_map<int, dnnl::memory> args;
    double reorder_ms = 0;  // the one-time weight reorder

    OneDNNConv(const Layer& l, float* x, float* w, float* y) {
        using namespace dnnl;
        using tag = memory::format_tag;
        const auto f32 = memory::data_type::f32;
        memory::dims src{1, l.c, l.h, l.w}, wei{l.k, l.c, l.r, l.s}, dst{1, l.k, l.oh(), l.ow()};
        convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct,
                                    memory::desc(src, f32, tag::nchw),
                                    memory::desc(wei, f32, tag::any),
                                    memory::desc(dst, f32, tag::nchw), {l.stride, l.stride}, {0, 0},
                                    {l.pad, l.pad}, {l.pad, l.pad});
        convolution_forward::primitive_desc pd(d, eng);
        memory user_wei({wei, f32, tag::oihw}, eng, w);
        memory wei_m(pd.weights_desc(), eng);
        reorder wei_reorder(user_wei, wei_m);
        reorder_ms = median_ms(
            [&] {
                wei_reorder.execute(strm, user_wei, wei_m);
                strm.wait();
            },
            1, 5);
        conv = convolution_forward(pd);
        args = {{DNNL_ARG_SRC, memory(pd.src_desc(), eng, x)},
                {DNNL_ARG_WEIGHTS, wei_m},
                {DNNL_ARG_DST, memory(pd.dst_desc(), eng, y)}};
    }
    void run() {
        conv.execute(strm, args);
        strm.wait();
    }
};

// tessel's kernels of a layer, as `run_layer` times them: the rules and the tuned schedule with
// the weight packed inside every call, then both with the weight constant (a pack they have runs
// once, by the module's pre_transform, outside the timing). `suffix` names the BENCH case.
struct Variant {
    const char* label;   // the per-layer line's column
    const char* suffix;  // "<layer><suffix>" in the BENCH lines
    bool tuned;          // op::default_schedule (shipped logs) rather than the rules
    bool constant;       // the weight is constant: packed once
};
constexpr Variant kVariants[] = {{"rules", "", false, false},
                                 {"tuned", ",tuned", true, false},
                                 {"prepacked", ",prepacked", false, true},
                                 {"tuned+prepacked", ",tuned_prepacked", true, true}};
constexpr size_t kNumVariants = std::size(kVariants);
// The variants the summary lines name: the tuned kernels and the two pre-packed ones.
constexpr size_t kTuned = 1, kPrepacked = 2, kTunedPrepacked = 3;

struct Result {
    double gflops[kNumVariants] = {};        // per variant
    double transform_ms[kNumVariants] = {};  // one-time: tessel's pre_transform (0: no pack)
    bool shipped[kNumVariants] = {};         // the kernel is a shipped record
    double onednn = 0, reorder_ms = 0;       // GFLOP/s; one-time: oneDNN's weight reorder
};

// A variant's kernel of the layer and its pre_transform (none when the schedule has no pack to
// rewrite), and whether the shipped logs hold the record it was built from.
struct Built {
    Kernel kernel;
    std::optional<Kernel> transform;
    bool shipped = false;
};

Built build_variant(const Variant& v, const Layer& l, const Target& target) {
    TensorDAG dag = make_workload("op.conv2d_nchw", l.params);
    std::vector<std::string> constant;
    if (v.constant) constant.push_back(dag.inputs.at(1).op()->name);
    dag = mark_constant(dag, constant);
    Schedule s = v.tuned ? op::default_schedule(dag.outputs, target)
                         : op::default_schedule_rules(dag.outputs, target);
    Module m = build(s, dag.args(), target);
    Built b{m.get("main"), std::nullopt, false};
    std::vector<std::string> names = m.kernel_names();
    if (std::find(names.begin(), names.end(), "main_pre_transform") != names.end())
        b.transform = m.get("main_pre_transform");
    ApplyHistoryBest* shipped = shipped_tuning_logs();
    std::string hash =
        SearchTask("op.conv2d_nchw", l.params, target, std::nullopt, constant).dag_hash_hex();
    b.shipped = v.tuned && shipped && !shipped->candidates(hash, target).empty();
    return b;
}

bool run_layer(const Layer& l, int rounds, Result& result) {
    Target target("llvm");
    std::vector<float> x = random_floats(size_t(l.c * l.h * l.w), 3),
                       w = random_floats(size_t(l.k * l.c * l.r * l.s), 5);
    NDArray X = NDArray::empty({1, l.c, l.h, l.w}, float32()),
            W = NDArray::empty({l.k, l.c, l.r, l.s}, float32());
    std::copy(x.begin(), x.end(), X.data_as<float>());
    std::copy(w.begin(), w.end(), W.data_as<float>());
    std::vector<std::function<void()>> runs;
    std::vector<NDArray> outs;
    for (size_t i = 0; i < kNumVariants; ++i) {
        Built b = build_variant(kVariants[i], l, target);
        result.shipped[i] = b.shipped;
        NDArray weight = W;  // the weight the kernel takes: packed once when it has a transform
        if (b.transform) {
            std::vector<int64_t> shape;
            for (const Dim& d : b.transform->signature().args.at(1).shape) shape.push_back(d.value);
            weight = NDArray::empty(shape, float32());
            Kernel transform = *b.transform;
            result.transform_ms[i] = median_ms([&] { transform({W, weight}); }, 1, 5);
        }
        NDArray out = NDArray::empty({1, l.k, l.oh(), l.ow()}, float32());
        outs.push_back(out);
        runs.push_back([kernel = b.kernel, X, weight, out]() mutable { kernel({X, weight, out}); });
    }
    std::vector<float> y_dnnl(size_t(l.k * l.oh() * l.ow()));
    OneDNNConv dnnl(l, x.data(), w.data(), y_dnnl.data());
    runs.push_back([&] { dnnl.run(); });
    result.reorder_ms = dnnl.reorder_ms;
    for (auto& run : runs) run();
    for (size_t i = 0; i <= kNumVariants; ++i) {
        const float* out = i < kNumVariants ? outs[i].data_as<float>() : y_dnnl.data();
        std::string mismatch = check_sampled(l, x, w, out);
        if (!mismatch.empty()) {
            std::printf("%s %s: check failed: %s\n", l.name().c_str(),
                        i < kNumVariants ? kVariants[i].label : "oneDNN", mismatch.c_str());
            return false;
        }
    }
    for (int i = 0; i < 3; ++i)
        for (auto& run : runs) run();
    std::vector<std::vector<double>> seconds(runs.size());
    for (int r = 0; r < rounds; ++r) {
        // Each timed run follows an untimed one of its own: a library's threads may still spin
        // after its run (tessel's for TESSEL_SPIN_US), which would take the next one's cores.
        for (size_t i = 0; i < runs.size(); ++i) {
            warm_for(runs[i], tessel_spin_margin());
            seconds[i].push_back(seconds_of(runs[i]));
        }
    }
    for (size_t i = 0; i < kNumVariants; ++i)
        result.gflops[i] = l.flops() / median(seconds[i]) / 1e9;
    result.onednn = l.flops() / median(seconds.back()) / 1e9;
    std::printf("%-24s x%d ", l.name().c_str(), l.count);
    for (size_t i = 0; i < kNumVariants; ++i)
        std::printf(" %s %.1f%s", kVariants[i].label, result.gflops[i],
                    kVariants[i].tuned && !result.shipped[i] ? " (no record)" : "");
    std::printf(
        "  oneDNN %.1f GFLOP/s; one-time weight transform: tessel %.3f ms%s (tuned %.3f), "
        "oneDNN %.3f ms\n",
        result.onednn, result.transform_ms[kPrepacked],
        result.transform_ms[kPrepacked] > 0 ? "" : " (no pack)",
        result.transform_ms[kTunedPrepacked], result.reorder_ms);
    std::fflush(stdout);
    return true;
}

// Sets the threading environment (2 threads unless said otherwise) and re-executes once, so that
// oneDNN's OpenMP runtime and tessel's thread pool read it at load time.
void ensure_environment(char** argv) {
    if (std::getenv("TESSEL_CONV_BENCH_ENV")) return;
    setenv("TESSEL_CONV_BENCH_ENV", "1", 1);
    setenv("OMP_WAIT_POLICY", "passive", 1);
    setenv("TESSEL_NUM_THREADS", "2", 0);
    setenv("OMP_NUM_THREADS", std::getenv("TESSEL_NUM_THREADS"), 0);
    execv("/proc/self/exe", argv);
    std::perror("bench_conv2d_cpu: re-exec failed; measuring with the current environment");
}

}  // namespace

int main(int argc, char** argv) {
    ensure_environment(argv);
    int rounds = 31, only = -1;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--rounds" && i + 1 < argc) {
            rounds = std::atoi(argv[++i]);
        } else if (a == "--layer" && i + 1 < argc) {
            only = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: bench_conv2d_cpu [--rounds N] [--layer I]\n");
            return 2;
        }
    }
    if (rounds < 1) {
        std::fprintf(stderr, "bench_conv2d_cpu: --rounds must be at least 1\n");
        return 2;
    }
    std::vector<Layer> layers = resnet_layers();
    std::printf(
        "conv2d_cpu: %zu layers, %d threads (tessel) / OMP_NUM_THREADS=%s (oneDNN), median "
        "of %d interleaved rounds after 3 warm-up runs\n",
        layers.size(), ThreadPool::global().num_threads(), std::getenv("OMP_NUM_THREADS"), rounds);
    std::vector<std::pair<std::string, Result>> results;
    for (size_t i = 0; i < layers.size(); ++i) {
        if (only >= 0 && size_t(only) != i) continue;
        Result r;
        if (!run_layer(layers[i], rounds, r)) return 1;
        results.emplace_back(layers[i].name(), r);
    }
    double log_t[kNumVariants] = {}, log_d = 0;
    int shipped[kNumVariants] = {};
    for (const auto& [name, r] : results) {
        for (size_t i = 0; i < kNumVariants; ++i) {
            std::printf("BENCH conv2d_cpu %s%s tessel=%.1f onednn=%.1f ratio=%.3f\n", name.c_str(),
                        kVariants[i].suffix, r.gflops[i], r.onednn, r.gflops[i] / r.onednn);
            log_t[i] += std::log(r.gflops[i]);
            shipped[i] += r.shipped[i];
        }
        std::printf(
            "BENCH conv2d_cpu %s,weight_transform tessel_ms=%.3f tuned_ms=%.3f onednn_ms=%.3f\n",
            name.c_str(), r.transform_ms[kPrepacked], r.transform_ms[kTunedPrepacked],
            r.reorder_ms);
        log_d += std::log(r.onednn);
    }
    const double n = double(std::max<size_t>(results.size(), 1));
    std::printf(
        "tuned: %d of %zu layers from the shipped tuning logs, %d with the weight constant "
        "(%s)\n",
        shipped[kTuned], results.size(), shipped[kTunedPrepacked],
        shipped_tuning_logs() ? shipped_tuning_logs_folder().c_str() : "off");
    for (size_t i = 0; i < kNumVariants; ++i)
        std::printf("BENCH conv2d_cpu geomean%s tessel=%.1f onednn=%.1f ratio=%.3f\n",
                    kVariants[i].suffix, std::exp(log_t[i] / n), std::exp(log_d / n),
                    std::exp((log_t[i] - log_d) / n));
    return 0;
}
