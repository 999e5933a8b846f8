// network_cpu: ResNet-50's distinct conv2d and dense layers (batch 1, NCHW fp32, the operator
// library's `resnet50` preset, weighted by how often the network runs each) as a user gets them
// with no tuning: op::default_schedule(), which takes the shipped tuning logs' record
// (tuning_logs/; docs/tuning.md, "Shipped tuning logs") where the target matches, against
// oneDNN's layers in one harness (benchmarks/support/OneDnnLayers.h: format any, reorders outside
// the timing, each library's samples after 100 ms of its own untimed calls, oneDNN on as many
// OpenMP threads as tessel has). Each tessel layer is checked against oneDNN's output first.
//
//   benchmarks/run.sh network_cpu [--target T] [--runs N] [--default-rules] [--no-pre-packed]
//                                 [--blocked] [--layers I,J,...]
//
// --layers times only the layers of those indices (as the lines print them: the job's task
// indices), for a look at a few; the totals are then of those layers alone.
//
// --blocked runs the convolutions on blocked activations (the job's "layout": "NCHW16c":
// op::conv2d_nchwc, the RGB stem's input in one block of 3 channels), as oneDNN runs its own: the
// layers agree on the layout, so the only transform is the network's input into it, timed and
// counted once in tessel's total (the last block's output, pooled to 1 x 1, is NCHW's order
// already). Their schedules come from the shipped logs' records of the blocked tasks where the
// logs hold them (tessel-tune on a job with that layout makes them), else from the rules. With
// the weights constant (unless --no-pre-packed), the 3 x 3 stride-1 convolutions run by
// Winograd's F(2 x 2, 3 x 3) (op.conv2d_nchwc_winograd, op::blocked_layers): their filters are
// transformed once, with the other layers' weights, and timed as a one-time cost. oneDNN runs
// its own convolution algorithm choice (format any, the direct convolution on this path).
//
// On NCHW activations too, with the weights constant, the 3 x 3 stride-1 convolutions run by
// Winograd (op.conv2d_nchw_winograd: the blocked one between two layout copies, each timed as
// part of the layer's call), against oneDNN's own choice of algorithm on NCHW.
//
// The layers' weights are constant (the task's layout-rewrite option, docs/tuning.md, "Constant
// operands and layout rewrite"): a schedule that packs a weight does so once, outside the timing,
// as oneDNN's weights are reordered once; each line also gives both one-time costs. The Zen 5
// logs hold records of the tasks without constant weights (--no-pre-packed measures those), the
// Zen 4 logs of three tasks with them; a layer without a record takes the default rules.
//
// Prints one line per layer (milliseconds, and where its schedule came from: the shipped logs'
// record for this exact target or for a compatible one, or the default rules), then
// `BENCH network_cpu weighted_latency_ms tessel=<ms> onednn=<ms> ratio=<onednn/tessel>` (the
// ratio reads as tessel's relative speed) and `BENCH network_cpu shipped_layers ...`: how many
// layers had a record. --default-rules measures the rules instead (the shipped logs off).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

#include "support/OneDnnLayers.h"
#include "tessel/auto_schedule/records/ShippedLogs.h"
#include "tessel/auto_schedule/tuner/Job.h"
#include "tessel/driver/DefaultSchedule.h"

using namespace tessel;

namespace {

// Where op::default_schedule() takes the layer's schedule from.
std::string schedule_source(const SearchTask& task) {
    ApplyHistoryBest* shipped = shipped_tuning_logs();
    if (!shipped) return "default rules";
    std::vector<ApplyHistoryBest::Match> m =
        shipped->candidates(task.dag_hash_hex(), task.target());
    if (m.empty()) return "default rules";
    return m[0].exact ? "shipped" : "shipped (from " + m[0].record->target + ")";
}

}  // namespace

int main(int argc, char** argv) {
    bench::match_openmp_threads(argv);
    CLI::App app{"network_cpu: ResNet-50's layers with the shipped tuning logs against oneDNN"};
    std::string target = "llvm -num-cores=2";
    int runs = 31;
    bool rules = false, no_pre_packed = false, blocked = false;
    std::vector<size_t> only;
    app.add_option("--target", target, "the target (default llvm -num-cores=2: this machine)");
    app.add_option("--runs", runs, "timed samples per layer and library");
    app.add_flag("--default-rules", rules, "the default rules, the shipped logs off");
    app.add_flag("--no-pre-packed", no_pre_packed,
                 "weights not constant: every call packs them (the shipped logs' tasks)");
    app.add_flag("--blocked", blocked,
                 "convolutions on blocked activations (conv2d_nchwc), as oneDNN's; the input's "
                 "transform into the layout counted once");
    app.add_option("--layers", only, "only these layers (their printed indices)")->delimiter(',');
    CLI11_PARSE(app, argc, argv);
    if (rules) use_shipped_tuning_logs(false);
    Job job = parse_job(R"({"format_version": 1, "target": ")" + target +
                            R"(", "trials": 1, "network": "resnet50", "constant_weights": )" +
                            (no_pre_packed ? "false" : "true") + R"(, "layout": ")" +
                            (blocked ? "NCHW16c" : "NCHW") + "\"}",
                        "network_cpu");
    std::vector<SearchTask> search = job_search_tasks(job);
    std::cerr << "network_cpu: shipped tuning logs "
              << (shipped_tuning_logs() ? "from '" + shipped_tuning_logs_folder() + "'" : "off")
              << ", target " << search.front().target().str() << "\n";
    double tessel_total = 0, onednn_total = 0, tessel_transforms = 0, onednn_transforms = 0;
    int shipped = 0, layers = 0;
    bool all_ok = true;
    for (size_t i = 0; i < job.tasks.size(); ++i) {
        const JobTask& t = job.tasks[i];
        if (t.workload != "op.conv2d_nchw" && t.workload != "op.conv2d_nchwc" &&
            t.workload != "op.conv2d_nchwc_winograd" && t.workload != "op.conv2d_nchw_winograd" &&
            t.workload != "op.dense")
            continue;
        if (!only.empty() && std::find(only.begin(), only.end(), i) == only.end()) continue;
        const SearchTask& task = search[i];
        std::string source = schedule_source(task);
        bench::LayerTiming r = bench::time_layer(
            t, task, op::default_schedule(task.dag().outputs, task.target()), runs);
        all_ok = all_ok && r.ok;
        ++layers;
        shipped += source.rfind("shipped", 0) == 0;
        tessel_total += t.weight * r.tessel_ms;
        onednn_total += t.weight * r.onednn_ms;
        tessel_transforms += t.weight * r.tessel_transform_ms;
        onednn_transforms += t.weight * r.onednn_transform_ms;
        std::cout << "layer " << i << " x" << t.weight << " "
                  << task.key().substr(0, task.key().find(' ')) << ": tessel " << r.tessel_ms
                  << " ms (" << source << "), oneDNN " << r.onednn_ms << " ms, ratio "
                  << r.onednn_ms / r.tessel_ms << "; one-time weight transform: tessel "
                  << r.tessel_transform_ms << " ms, oneDNN " << r.onednn_transform_ms << " ms"
                  << (r.ok ? "" : " (MISMATCH)") << std::endl;
    }
    if (blocked && only.empty()) {
        // The network's input (1 x 3 x 224 x 224) into the stem's layout, once a call.
        Tensor x = placeholder({1, 3, 224, 224}, Float(32), "x");
        Tensor xb = op::nchw_to_nchwc(x, 3);
        Module m = build(op::default_schedule({xb}, search.front().target()), {x, xb},
                         search.front().target());
        Kernel k = m.get("main");
        NDArray in = NDArray::empty({1, 3, 224, 224}, float32());
        NDArray out = NDArray::empty({1, 1, 224, 224, 3}, float32());
        std::vector<float> values = random_floats(3 * 224 * 224, 5);
        std::copy(values.begin(), values.end(), static_cast<float*>(in.data()));
        const double edge = median_ms([&] { k({in, out}); }, 10, runs);
        tessel_total += edge;
        std::cout << "input into the blocked layout: tessel " << edge << " ms (counted once)\n";
    }
    if (!all_ok) {
        std::cerr << "network_cpu: a layer differs from oneDNN\n";
        return 1;
    }
    // The one-time costs of the whole network's weights (each layer's count of them).
    std::cout << "BENCH network_cpu weight_transform_tessel ms=" << tessel_transforms << "\n";
    std::cout << "BENCH network_cpu weight_transform_onednn ms=" << onednn_transforms << "\n";
    std::cout << "BENCH network_cpu weighted_latency_ms tessel=" << tessel_total
              << " onednn=" << onednn_total << " ratio=" << onednn_total / tessel_total << "\n";
    std::cout << "BENCH network_cpu shipped_layers tessel=" << shipped << " layers=" << layers
              << " ratio=" << double(shipped) / layers << "\n";
    return 0;
}
