// Random but legal CPU schedules of GEMM and conv2d, for the cost-model benchmark's generated data
// set (until the tuner's own records exist). They follow the shape of Ansor's CPU sketches —
// multi-level SSRSRS tiling with random tile sizes (divisors, so no guards), sometimes a local
// write cache computed at the output's tile, sometimes a perturbed loop order, fused parallel
// outer loops, a vectorised and an unrolled inner loop, an auto-unroll pragma — so the data set
// spans the programs a search would visit, good and bad.
#pragma once

#include <cstdint>
#include <random>

#include "tessel/auto_schedule/task/SearchTask.h"

namespace tessel::bench {

/// A random schedule of `task` (a "matmul" or "conv2d" workload task); ScheduleError when a
/// primitive refuses a random choice (the caller draws again).
Schedule random_schedule(const SearchTask& task, std::mt19937_64& rng);

}  // namespace tessel::bench
