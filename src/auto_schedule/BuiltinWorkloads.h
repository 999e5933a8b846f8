// The workloads tessel registers itself (Workloads.cpp; docs/workloads.md lists them). Not a
// public API: make_workload builds them by name.
#pragma once

#include <string>
#include <vector>

#include "tessel/auto_schedule/Workload.h"

namespace tessel::internal {

/// One built-in workload: its name, parameters and builder.
struct BuiltinWorkload {
    std::string name;
    std::vector<WorkloadParamSpec> params;
    WorkloadBuilder builder;
};

/// Every built-in workload, in a fixed order.
std::vector<BuiltinWorkload> builtin_workloads();

/// The operator library's workloads, "op.<operator>" (src/op/OperatorWorkloads.cpp).
std::vector<BuiltinWorkload> operator_workloads();

}  // namespace tessel::internal
