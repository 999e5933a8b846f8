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

#include "support/BenchUtil.h"
#include "support/GemmState.h"
#include "tessel/HostArray.h"
#include "tessel/Tolerance.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/InferBounds.h"
#include "tessel/te/Operation.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;

namespace {

using bench::Gemm;
using bench::gemm;
using bench::gemm_state;

void report(const char* what, double ms) {
    std::printf("%-34s %9.4f ms  %9.0f states/s\n", what, ms, 1000.0 / ms);
}

}  // namespace

int main() {
    if (!bench::check_gemm_state()) return 1;
    const int n = 1024;
    Gemm g = gemm(n);
    std::vector<Step> steps = gemm_state(g, n);
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
