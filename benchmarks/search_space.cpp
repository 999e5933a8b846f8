// Benchmark: how fast the search space makes complete candidates. A sample is a random
// annotation of a random sketch, checked by verify_schedule and lowered to the feature point
// (LowerOptions::stop_after = "partition_loops"), as the evolutionary search scores it. Prints
// samples per second on all cores (TESSEL_NUM_THREADS) for a 1024^3 GEMM and a ResNet 3x3
// conv2d on the host CPU, and for both on an sm_90 GPU target (lowering only: no GPU needed),
// with the rejection rate. Checked first: a seeded subset of small GEMM samples runs in the
// loop-IR interpreter and matches the reference interpreter.
//
//   benchmarks/run.sh search_space               # the throughput cases
//   benchmarks/run.sh search_space --suite N     # N samples per workload of the full suite,
//                                                # both targets: sketches, rejections, rate
//   benchmarks/run.sh search_space --sketches matmul llvm   # a small suite workload's sketches
//                                                # and one sample of each, as Python
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "tessel/HostArray.h"
#include "tessel/Tolerance.h"
#include "tessel/auto_schedule/space/SearchSpace.h"
#include "tessel/auto_schedule/space/WorkloadSuite.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"
#include "tessel/runtime/ThreadPool.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs a few samples of a 32^3 GEMM in the loop interpreter against the reference.
bool check_small_gemm() {
    SearchTask task("matmul", {int64_t(32), int64_t(32), int64_t(32), Float(32)}, Target("llvm"));
    SearchSpace space(task);
    SampleResult r = space.sample(8, 1);
    const TensorDAG& dag = task.dag();
    HostArray a = HostArray::random(Float(32), {32, 32}, 1),
              b = HostArray::random(Float(32), {32, 32}, 2);
    HostArray want = evaluate_reference(dag.outputs, {{dag.inputs[0], a}, {dag.inputs[1], b}})[0];
    for (const SearchState& st : r.states) {
        LoweredFunc f = lower(st.schedule, dag.args(), "main", LowerOptions{});
        HostArray c = HostArray::full(Float(32), {32, 32}, std::nan(""));
        run_lowered(f, {&a, &b, &c});
        CompareResult cmp = compare_to_reference(c, want, tolerance_for(Float(32), 32));
        if (!cmp) {
            std::printf("sample mismatch (%s):\n%s\n", cmp.message().c_str(),
                        st.schedule.to_python().c_str());
            return false;
        }
    }
    return !r.states.empty();
}

// The process's CPU time (all threads), seconds.
double cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Samples per second on all threads (the best of 3 batches of 400), and per CPU second times the
// thread count: what the threads would give on free cores (the two differ on a loaded machine).
void throughput(const std::string& label, const SuiteWorkload& w, const std::string& target) {
    SearchSpace space(SearchTask(w.workload, w.params, Target(target)));
    space.sample(16, 0);  // warm-up
    int threads = ThreadPool::default_num_threads();
    double best = 0, best_cpu = 0, rate = 0;
    for (int rep = 0; rep < 3; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        double c0 = cpu_seconds();
        SampleResult r = space.sample(400, 1 + rep);
        double s = seconds_since(t0), c = cpu_seconds() - c0;
        best = std::max(best, static_cast<double>(r.states.size()) / s);
        best_cpu = std::max(best_cpu, static_cast<double>(r.states.size()) / c * threads);
        rate = r.rejection_rate();
    }
    std::printf(
        "BENCH search_space %s_%s samples_per_s=%.0f cpu_bound_samples_per_s=%.0f "
        "rejected=%.1f%% threads=%d\n",
        label.c_str(), Target(target).is_gpu() ? "cuda" : "llvm", best, best_cpu, 100 * rate,
        threads);
}

void suite_report(int n) {
    for (const char* target : {"llvm", "cuda -arch=sm_90"}) {
        for (const SuiteWorkload& w : search_suite("full")) {
            SearchSpace space(SearchTask(w.workload, w.params, Target(target)));
            auto t0 = std::chrono::steady_clock::now();
            SampleResult r = space.sample(n, 42);
            double s = seconds_since(t0);
            std::printf("%-6s %-22s sketches=%zu samples=%zu rejected=%5.1f%% %7.0f/s\n",
                        Target(target).is_gpu() ? "cuda" : "llvm", w.label.c_str(),
                        space.sketches().size(), r.states.size(), 100 * r.rejection_rate(),
                        r.states.size() / s);
            for (const auto& [why, count] : r.rejected)
                std::printf("    %6lld  %s\n", static_cast<long long>(count), why.c_str());
        }
    }
}

}  // namespace

// Prints the sketches of the small suite's workload `label` for `target`, and one sample of each.
void print_sketches(const std::string& label, const std::string& target) {
    for (const SuiteWorkload& w : search_suite("small")) {
        if (w.label != label) continue;
        SearchSpace space(SearchTask(w.workload, w.params, Target(target)));
        for (size_t k = 0; k < space.sketches().size(); ++k) {
            const Sketch& sk = space.sketches()[k];
            std::printf("## sketch %zu:", k);
            for (const std::string& t : sk.trace) std::printf(" [%s]", t.c_str());
            std::printf("\n%s", sk.schedule.to_python().c_str());
            std::mt19937_64 rng(1);
            if (auto st = space.annotate(static_cast<int>(k), rng))
                std::printf("## a sample of sketch %zu:\n%s", k, st->schedule.to_python().c_str());
        }
    }
}

int main(int argc, char** argv) {
    if (argc >= 4 && std::strcmp(argv[1], "--sketches") == 0) {
        print_sketches(argv[2], argv[3]);
        return 0;
    }
    if (argc >= 3 && std::strcmp(argv[1], "--suite") == 0) {
        suite_report(std::atoi(argv[2]));
        return 0;
    }
    if (!check_small_gemm()) {
        std::printf("FAILED: GEMM samples do not match the reference\n");
        return 1;
    }
    std::vector<SuiteWorkload> full = search_suite("full");
    for (const char* target : {"llvm", "cuda -arch=sm_90"})
        for (const SuiteWorkload& w : full)
            if (w.label == "matmul" || w.label == "conv2d_3x3") throughput(w.label, w, target);
    return 0;
}
