// Benchmark: d = relu(a * b + c) over 2 GiB per array (memory bound), tessel against the same
// computation as a plain C++ loop compiled with -O3 -march=native, both on tessel's thread pool
// (TESSEL_NUM_THREADS threads, the same static chunks). Bytes count each array read or written
// once (16 bytes per element). Checks tessel's result first; the samples of the two alternate.
//
//   bench_elementwise_cpu [log2 elements per array, default 29 = 2 GiB of float32]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "reference/elementwise_loop.h"
#include "support/BenchUtil.h"
#include "tessel/driver/Build.h"
#include "tessel/ir/IROperator.h"
#include "tessel/runtime/NDArray.h"
#include "tessel/runtime/ThreadPool.h"
#include "tessel/te/Operation.h"

using namespace tessel;

namespace {

constexpr int64_t kChunk = 1 << 16;  // elements per parallel iteration, for both sides

// Deterministic, non-zero values in [-1, 1) (a cheap hash of the index).
void fill(NDArray& a, uint32_t seed) {
    float* p = a.data_as<float>();
    int64_t n = a.shape()[0];
    ThreadPool::global().parallel_for(0, n / kChunk, [&](int64_t chunk) {
        for (int64_t i = chunk * kChunk; i < (chunk + 1) * kChunk; ++i) {
            uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
            h ^= h >> 13;
            h *= 0x5bd1e995u;
            p[i] = static_cast<float>(h >> 8) / 8388608.0f - 1.0f + 1.0f / 4096.0f;
        }
    });
}

}  // namespace

int main(int argc, char** argv) {
    int log2_n = argc > 1 ? std::atoi(argv[1]) : 29;
    if (log2_n < 17 || log2_n > 30) {
        std::fprintf(stderr, "usage: bench_elementwise_cpu [log2 elements, 17..30]\n");
        return 2;
    }
    const int64_t n = int64_t(1) << log2_n;
    Tensor A = placeholder({n}, Float(32), "a"), B = placeholder({n}, Float(32), "b"),
           C = placeholder({n}, Float(32), "c");
    Tensor D = compute(
        {n}, [&](Var i) { return max(A(i) * B(i) + C(i), 0.0f); }, "d");
    Schedule s = create_schedule({D});
    int d = s.stage_of(D);
    s.split(d, 0, kChunk);  // i.outer (parallel chunks), i.inner
    s.split(d, 1, 16);      // i.outer, i.inner.outer, i.inner.inner (16 lanes)
    s.vectorize(d, 2);
    s.parallel(d, 0);
    Module m = build(s, {A, B, C, D}, "llvm", "elementwise");
    Kernel kernel = m.get("elementwise");

    NDArray a = NDArray::empty({n}, float32()), b = NDArray::empty({n}, float32()),
            c = NDArray::empty({n}, float32()), out = NDArray::empty({n}, float32());
    fill(a, 1);
    fill(b, 2);
    fill(c, 3);
    kernel({a, b, c, out});
    const float *pa = a.data_as<float>(), *pb = b.data_as<float>(), *pc = c.data_as<float>();
    float* pd = out.data_as<float>();
    int64_t positives = 0;
    for (int64_t i = 0; i < n; ++i) {
        // tessel may contract a * b + c into one fma (ir/IR.h, "Floats"): either rounding is right.
        float want = std::max(pa[i] * pb[i] + pc[i], 0.0f);
        float fused = std::max(std::fma(pa[i], pb[i], pc[i]), 0.0f);
        if (pd[i] != want && pd[i] != fused) {
            std::printf("check failed at %lld: %.9g, expected %.9g (or %.9g fused)\n",
                        (long long)i, pd[i], want, fused);
            return 1;
        }
        positives += want > 0;
    }
    std::printf("checked %lld elements (%lld positive) against a scalar loop\n", (long long)n,
                (long long)positives);

    auto run_tessel = [&] { kernel({a, b, c, out}); };
    auto run_reference = [&] {
        ThreadPool::global().parallel_for(0, n / kChunk, [&](int64_t chunk) {
            elementwise_reference(pa + chunk * kChunk, pb + chunk * kChunk, pc + chunk * kChunk,
                                  pd + chunk * kChunk, kChunk);
        });
    };
    run_tessel();  // warm-up
    run_reference();
    std::vector<double> tessel_s, reference_s;
    for (int round = 0; round < 9; ++round) {
        tessel_s.push_back(seconds_of(run_tessel));
        reference_s.push_back(seconds_of(run_reference));
    }
    double bytes = 16.0 * static_cast<double>(n);
    double tessel_gbs = bytes / median(tessel_s) / 1e9;
    double reference_gbs = bytes / median(reference_s) / 1e9;
    std::printf("%lld elements per array, %d threads, median of 9 alternating runs after warm-up\n",
                (long long)n, ThreadPool::global().num_threads());
    std::printf("BENCH elementwise_cpu n=2^%d tessel=%.2f cpp_O3_native=%.2f ratio=%.3f\n", log2_n,
                tessel_gbs, reference_gbs, tessel_gbs / reference_gbs);
    return 0;
}
