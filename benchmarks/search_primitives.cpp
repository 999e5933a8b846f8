// Benchmark: what the auto-scheduler does to every candidate, on one core. A 1024^3 GEMM state
// as Ansor's CPU sketch makes it — a local write cache, SSRSRS multi-level tiling of the cache
// stage, the output's loops tiled to match its outer level (follow_split) with the cache computed
// there, the outer loops fused and parallel, inner loops vectorised and unrolled, an auto-unroll
// pragma (20 steps) —
// timed as: replaying its steps on the DAG's fresh schedule; replay + bound inference; lowering
// to the feature point (LowerOptions::stop_after, before storage flattening, where the cost
// model reads its features); full lowering. Prints the median per state and states per second,
// after warm-up. Checked first: the same steps on a 64^3 GEMM run in the loop-IR interpreter
// against the reference interpreter.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "tessel/HostArray.h"
#include "tessel/Tolerance.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/InferBounds.h"
#include "tessel/te/Operation.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;

namespace {

struct Gemm {
    Tensor A, B, C;
};

Gemm gemm(int n) {
    Gemm g;
    g.A = placeholder({n, n}, Float(32), "A");
    g.B = placeholder({n, n}, Float(32), "B");
    IterVar k = reduce_axis(Range(0, n), "k");
    g.C = compute(
        {n, n}, [&](Var i, Var j) { return sum(g.A(i, k) * g.B(k, j), {k}); }, "C");
    return g;
}

// The sketch's steps with tile sizes for n (a power of two >= 64).
std::vector<Step> sketch(const Gemm& g, int n) {
    Schedule s = create_schedule({g.C});
    int cl = s.cache_write(s.stage_of(g.C), "local");  // C.local = 2, C = 3
    int c = cl + 1;
    // C.local: i -> i0 i1 i2 i3, j -> j0 j1 j2 j3, k -> k0 k1 (SSRSRS after the reorder).
    int is = static_cast<int>(s.steps().size());
    s.split(cl, 0, n / 8);  // i0 i'
    s.split(cl, 1, 8);      // i0 i1 i''
    s.split(cl, 2, 2);      // i0 i1 i2 i3
    s.split(cl, 4, n / 4);  // ... j0 j'
    s.split(cl, 5, 64);     // ... j0 j1 j''
    s.split(cl, 6, 16);     // ... j0 j1 j2 j3
    s.split(cl, 8, 4);      // k0 k1
    // i0 i1 i2 i3 j0 j1 j2 j3 k0 k1 -> i0 j0 i1 j1 k0 i2 j2 k1 i3 j3
    s.reorder(cl, {0, 4, 1, 5, 8, 2, 6, 9, 3, 7});
    // C: tiled like C.local's outermost level (a 128 x 256 tile), C.local computed at it.
    s.follow_split(c, 0, is);
    s.follow_split(c, 2, is + 3);
    s.reorder(c, {0, 2, 1, 3});  // i0 j0 i' j'
    s.compute_at(cl, c, 1);
    s.fuse(c, {0, 1});
    s.parallel(c, 0);
    s.split(c, 2, 16);
    s.vectorize(c, 3);
    s.vectorize(cl, 9);
    s.unroll(cl, 8);
    s.pragma_auto_unroll(cl, 64);
    return s.steps();
}

bool check() {
    Gemm g = gemm(64);
    Schedule s = replay({g.C}, sketch(g, 64));
    LoweredFunc f = lower(s, {g.A, g.B, g.C}, "main", LowerOptions{});
    HostArray a = HostArray::random(Float(32), {64, 64}, 1),
              b = HostArray::random(Float(32), {64, 64}, 2);
    HostArray c(Float(32), {64, 64});
    run_lowered(f, {&a, &b, &c});
    CompareResult r = compare_to_reference(c, evaluate_reference({g.C}, {{g.A, a}, {g.B, b}})[0],
                                           tolerance_for(Float(32), 64));
    if (!r.ok) std::printf("check failed: %s\n", r.message().c_str());
    return r.ok;
}

// The median milliseconds of `work` over `runs` runs after `warmup` runs.
double median_ms(const std::function<void()>& work, int warmup, int runs) {
    std::vector<double> ms;
    for (int rep = 0; rep < warmup + runs; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        work();
        double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                       .count();
        if (rep >= warmup) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

void report(const char* what, double ms) {
    std::printf("%-34s %9.4f ms  %9.0f states/s\n", what, ms, 1000.0 / ms);
}

}  // namespace

int main() {
    if (!check()) return 1;
    const int n = 1024;
    Gemm g = gemm(n);
    std::vector<Step> steps = sketch(g, n);
    Schedule base = create_schedule({g.C});  // the task's fresh state, made once
    std::vector<Tensor> args{g.A, g.B, g.C};
    LowerOptions to_features;  // no logging, no bounds checks: the tuner's setting
    to_features.stop_after = "partition_loops";  // the IR before storage flattening
    std::printf("1024^3 GEMM state: %zu steps, one thread\n", steps.size());
    double replay_ms = median_ms([&] { replay(base, steps); }, 200, 2000);
    double bounds_ms = median_ms([&] { infer_bounds(replay(base, steps)); }, 100, 1000);
    double features_ms =
        median_ms([&] { lower(replay(base, steps), args, "main", to_features); }, 20, 200);
    double lower_ms = median_ms([&] { lower(replay(base, steps), args, "main", {}); }, 10, 100);
    report("replay", replay_ms);
    report("replay + bound inference", bounds_ms);
    report("lowering to the feature point", features_ms);
    report("full lowering", lower_ms);
    std::printf("BENCH search_primitives replay ms=%.4f\n", replay_ms);
    std::printf("BENCH search_primitives replay_infer_bounds ms=%.4f\n", bounds_ms);
    std::printf("BENCH search_primitives lower_to_features ms=%.4f\n", features_ms);
    std::printf("BENCH search_primitives lower_full ms=%.4f\n", lower_ms);
    return 0;
}
