// Benchmark: how long build() — lower(), LLVM code generation, O3 and the ORC JIT — takes for the
// C++ GEMM tutorial's final schedule at n = 1024 (tutorials/cpp/gemm/gemm_schedule.cpp: B packed
// by a cache_read stage, register tiles, cache blocking, parallel loops), as the auto-scheduler
// compiles thousands of candidates. Prints the cold figure (the first build in the process:
// LLVM's initialisation included) and the median of warm builds. Checks a 64^3 instance of the
// same schedule first against a double-precision reference.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "gemm_schedule.h"
#include "tessel/runtime/NDArray.h"

using namespace tessel;

namespace {

bool check() {
    const int64_t n = 64;
    Module m = build_gemm(n, "gemm");
    NDArray a = NDArray::empty({n, n}, float32()), b = NDArray::empty({n, n}, float32()),
            c = NDArray::empty({n, n}, float32());
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (int64_t i = 0; i < n * n; ++i) {
        a.data_as<float>()[i] = dist(rng);
        b.data_as<float>()[i] = dist(rng);
    }
    m.get("gemm")({a, b, c});
    for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            double acc = 0, magnitude = 0;
            for (int64_t k = 0; k < n; ++k) {
                double p = double(a.data_as<float>()[i * n + k]) * b.data_as<float>()[k * n + j];
                acc += p;
                magnitude += std::fabs(p);
            }
            if (std::fabs(c.data_as<float>()[i * n + j] - acc) > 1e-5 * magnitude + 1e-6) {
                std::printf("check failed at (%lld, %lld)\n", (long long)i, (long long)j);
                return false;
            }
        }
    }
    return true;
}

double build_ms() {
    auto t0 = std::chrono::steady_clock::now();
    Module m = build_gemm(1024, "gemm");
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main() {
    double cold = build_ms();
    if (!check()) return 1;
    std::vector<double> ms;
    for (int rep = 0; rep < 25; ++rep) {
        double t = build_ms();
        if (rep >= 5) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    std::printf(
        "built the GEMM tutorial's final schedule (n=1024) %zu times after 5 warm-up builds "
        "(define + schedule + lower + LLVM codegen + O3 + JIT, one thread); cold: %.1f ms\n",
        ms.size(), cold);
    std::printf("BENCH compile_latency gemm1024_tutorial_cold ms=%.1f\n", cold);
    std::printf("BENCH compile_latency gemm1024_tutorial ms=%.1f\n", ms[ms.size() / 2]);
    return 0;
}
