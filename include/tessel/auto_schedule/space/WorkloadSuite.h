// The search space's suite of workloads: the operators the sketch, sampling, mutation and
// crossover tests and the search_space benchmark run on, each defined once (the operator
// library's registered workload where it has the operator).
#pragma once

#include <string>
#include <vector>

#include "tessel/auto_schedule/task/Workload.h"

namespace tessel {

/// One workload of the suite: a label for reports, the registered workload and its parameters.
struct SuiteWorkload {
    std::string label;
    std::string workload;
    WorkloadParams params;
};

/// The suite at `size`: "small" (shapes whose candidates run in the interpreters in
/// milliseconds: the tests) or "full" (shapes of real networks: the benchmarks). DSLError for
/// another size.
std::vector<SuiteWorkload> search_suite(const std::string& size = "small");

}  // namespace tessel
