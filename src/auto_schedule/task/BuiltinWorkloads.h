// The fixed workloads the registry holds from the start (Workloads.cpp; docs/workloads.md lists
// them). Not a public API: make_workload builds them by name.
#pragma once

#include <vector>

#include "tessel/te/Workload.h"

namespace tessel::internal {

/// Every built-in workload of Workloads.cpp, in a fixed order (the operator library's are
/// op::workloads()).
std::vector<WorkloadDefinition> builtin_workloads();

}  // namespace tessel::internal
