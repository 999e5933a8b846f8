// Benchmark: fp32 C = A · B (row-major, square n×n) on the CPU: the C++ tutorial's final GEMM
// schedule (tutorials/cpp/gemm/gemm_schedule.cpp) and op.matmul's schedule as a user gets it
// (op::default_schedule: the shipped tuning logs' record, tuning_logs/, for this target when they
// hold one, else the default rules; "n=<n>,tuned" lines) against
// oneDNN's dnnl_sgemm and OpenBLAS's cblas_sgemm, each on TESSEL_NUM_THREADS threads (default 2).
// Any packing happens inside the timed call, as dnnl_sgemm does. Runs are interleaved (one run of
// each per round); the libraries' worker threads are kept from spinning between runs
// (OMP_WAIT_POLICY=passive, OPENBLAS_THREAD_TIMEOUT=4: set before the libraries load, by re-exec).
// Each result is checked against a double-precision reference on sampled entries first.
//
//   bench_gemm_cpu [n ...]     default: 1024 2048
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gemm_schedule.h"
#include "support/BenchUtil.h"
#include "tessel/auto_schedule/task/Workload.h"
#include "tessel/driver/Build.h"
#include "tessel/driver/DefaultSchedule.h"
#include "tessel/runtime/NDArray.h"
#include "tessel/runtime/ThreadPool.h"

using namespace tessel;

namespace {

bool check(const char* who, int64_t n, const float* a, const float* b, const float* c) {
    std::string mismatch = check_gemm_sampled(n, a, b, c, 4096);
    if (!mismatch.empty()) std::printf("%s: check failed: %s\n", who, mismatch.c_str());
    return mismatch.empty();
}

// Sets the libraries' threading environment and re-executes once, so they read it at load time.
void ensure_environment(char** argv) {
    if (std::getenv("TESSEL_GEMM_BENCH_ENV")) return;
    setenv("TESSEL_GEMM_BENCH_ENV", "1", 1);
    setenv("OMP_WAIT_POLICY", "passive", 1);
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1);
    int threads = ThreadPool::default_num_threads();
    std::string t = std::to_string(threads);
    setenv("OMP_NUM_THREADS", t.c_str(), 0);
    setenv("OPENBLAS_NUM_THREADS", t.c_str(), 0);
    execv("/proc/self/exe", argv);
    std::perror("bench_gemm_cpu: re-exec failed; measuring with the current environment");
}

int run_case(int64_t n) {
    std::vector<float> a(n * n), b(n * n);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& x : a) x = dist(rng);
    for (float& x : b) x = dist(rng);
    NDArray A = NDArray::empty({n, n}, float32()), B = NDArray::empty({n, n}, float32()),
            C = NDArray::empty({n, n}, float32());
    std::copy(a.begin(), a.end(), A.data_as<float>());
    std::copy(b.begin(), b.end(), B.data_as<float>());
    std::vector<float> c_dnnl(n * n), c_blas(n * n);

    auto t0 = std::chrono::steady_clock::now();
    Module m = build_gemm(n, "gemm");
    double build_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    Kernel kernel = m.get("gemm");
    TensorDAG dag = make_workload("op.matmul", {n, n, n, int64_t(0), int64_t(0), Float(32)});
    Kernel tuned =
        build(op::default_schedule(dag.outputs, Target("llvm")), dag.args(), "llvm").get("main");
    NDArray Ct = NDArray::empty({n, n}, float32());
    auto run_tessel = [&] { kernel({A, B, C}); };
    auto run_tuned = [&] { tuned({A, B, Ct}); };
    auto run_dnnl = [&] {
        dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c_dnnl.data(), n);
    };
    auto run_blas = [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(),
                    n, 0.0f, c_blas.data(), n);
    };
    run_tessel();
    run_tuned();
    run_dnnl();
    run_blas();
    if (!check("tessel", n, a.data(), b.data(), C.data_as<float>()) ||
        !check("tessel (tuned)", n, a.data(), b.data(), Ct.data_as<float>()) ||
        !check("oneDNN", n, a.data(), b.data(), c_dnnl.data()) ||
        !check("OpenBLAS", n, a.data(), b.data(), c_blas.data()))
        return 1;
    std::vector<double> ts, us, ds, bs;
    int rounds = n <= 1024 ? 41 : 11;
    for (int r = 0; r < rounds; ++r) {
        // Each timed run follows an untimed one of its own: a library's threads may still spin
        // after its run (tessel's for TESSEL_SPIN_US), which would take the next one's cores.
        warm_for(run_tessel, tessel_spin_margin());
        ts.push_back(seconds_of(run_tessel));
        warm_for(run_tuned, tessel_spin_margin());
        us.push_back(seconds_of(run_tuned));
        warm_for(run_dnnl, tessel_spin_margin());
        ds.push_back(seconds_of(run_dnnl));
        warm_for(run_blas, tessel_spin_margin());
        bs.push_back(seconds_of(run_blas));
    }
    double flops = 2.0 * n * n * n;
    double t = flops / median(ts) / 1e9, u = flops / median(us) / 1e9, d = flops / median(ds) / 1e9,
           bl = flops / median(bs) / 1e9;
    std::printf(
        "n=%lld: tessel %.1f (op.matmul tuned %.1f), oneDNN %.1f, OpenBLAS %.1f GFLOP/s (median "
        "of %d interleaved rounds after warm-up; %d threads; tessel build %.0f ms)\n",
        (long long)n, t, u, d, bl, rounds, ThreadPool::global().num_threads(), build_ms);
    std::printf("BENCH gemm_cpu n=%lld tessel=%.1f onednn=%.1f ratio=%.3f\n", (long long)n, t, d,
                t / d);
    std::printf("BENCH gemm_cpu n=%lld tessel=%.1f openblas=%.1f ratio=%.3f\n", (long long)n, t, bl,
                t / bl);
    std::printf("BENCH gemm_cpu n=%lld,tuned tessel=%.1f onednn=%.1f ratio=%.3f\n", (long long)n, u,
                d, u / d);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    ensure_environment(argv);
    openblas_set_num_threads(ThreadPool::global().num_threads());
    std::vector<int64_t> sizes;
    for (int i = 1; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
    if (sizes.empty()) sizes = {1024, 2048};
    for (int64_t n : sizes) {
        if (n < 64 || n > 8192) {
            std::fprintf(stderr, "bench_gemm_cpu: n must be in [64, 8192]\n");
            return 2;
        }
        if (run_case(n) != 0) return 1;
    }
    return 0;
}
