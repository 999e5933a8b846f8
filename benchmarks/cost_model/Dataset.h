// The cost-model benchmark's data set: random schedules (RandomSchedules.h) of a few GEMM and
// conv2d tasks, each JIT-compiled through LLVM, checked against the reference interpreter on
// random inputs and timed with the runtime's time evaluator (one thread; the median of at least 5
// runs and 20 ms). Generated once and
// cached as JSON lines (a header line, then one record per program, in generation order); a cache
// made for another data-set version, task list, target or size is regenerated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/auto_schedule/task/SearchTask.h"

namespace tessel::bench {

/// One measured program, as the cache stores it.
struct DatasetRecord {
    int task = 0;               ///< index into Dataset::tasks
    std::string schedule;       ///< Schedule::to_json()
    std::vector<double> costs;  ///< seconds: the median of the timed runs (empty on error)
    int error = 0;              ///< 0, or 1: did not build; 2: wrong result
};

struct Dataset {
    std::string name;  ///< e.g. "random-gemm-conv2d-v1"
    std::vector<SearchTask> tasks;
    std::vector<DatasetRecord> records;  ///< in generation order
    double generation_seconds = 0;       ///< 0 when read from the cache
};

/// The data set's tasks for `target`.
std::vector<SearchTask> dataset_tasks(const Target& target);

/// Reads the data set from `cache_path`, or generates `size` programs (seed `seed`) and writes
/// the cache. Prints progress while generating.
Dataset load_or_generate_dataset(const std::string& cache_path, int size, uint64_t seed,
                                 const Target& target);

/// The noise floor of the figures: re-measures `per_task` successful programs of each task and
/// returns how often the two measurements order a pair the same way (pairs of one task whose
/// first measurements differ by at least 5%, as ranking_quality counts them).
double remeasured_pair_agreement(const Dataset& d, int per_task, uint64_t seed);

}  // namespace tessel::bench
