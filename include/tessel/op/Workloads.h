// The operator library's workloads: every operator under "op.<operator>" with its parameters
// (docs/operators.md lists them), so that a search task or the tuning daemon builds it by name.
// The workload registry (auto_schedule/task/Workload.h) holds them from its first use.
//
//   for (const WorkloadDefinition& w : op::workloads()) std::cout << w.name << "\n";
#pragma once

#include <vector>

#include "tessel/te/Workload.h"

namespace tessel::op {

/// The operator library's workload definitions, in a fixed order.
std::vector<WorkloadDefinition> workloads();

}  // namespace tessel::op
