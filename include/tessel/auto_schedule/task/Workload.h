// The workload registry: named, parameterised builders of tensor-expression DAGs, as TVM's
// auto_scheduler.register_workload. A search task names its computation by workload name and
// parameters (workload_key), and carries the DAG itself as JSON with its hash (te/Serialize.h,
// docs/design.md, decision 8), so a process that does not know the workload can still rebuild it.
//
//   register_workload("matmul", {{"M", ParamKind::Int}, {"N", ParamKind::Int},
//                                {"K", ParamKind::Int}, {"dtype", ParamKind::DType}},
//                     [](const WorkloadParams& p) { ... return TensorDAG{{A, B}, {C}}; });
//   TensorDAG dag = make_workload("matmul", {int64_t(512), int64_t(512), int64_t(512), Float(32)});
//
// Built-in workloads (docs/workloads.md lists them with their parameters: the fixed suite of
// task/Workloads.cpp and the operator library's, op/Workloads.h) are registered before the first
// use of the registry; Python registers more with @tessel.register_workload. The
// registry is thread-safe; builders run outside its lock (a builder may use the registry).
#pragma once

#include <string>
#include <vector>

#include "tessel/te/TensorDAG.h"
#include "tessel/te/Workload.h"

namespace tessel {

/// Registers `builder` as workload `name` taking `params`. Throws DSLError if the name is empty,
/// the builder is empty, or the name is taken and `replace` is false.
void register_workload(const std::string& name, std::vector<WorkloadParamSpec> params,
                       WorkloadBuilder builder, bool replace = false);
/// Removes workload `name`; returns whether it was registered.
bool unregister_workload(const std::string& name);
/// The registered workload names, sorted.
std::vector<std::string> workload_names();
/// The declared parameters of workload `name`; DSLError if it is not registered.
std::vector<WorkloadParamSpec> workload_param_specs(const std::string& name);

/// Builds workload `name`. The parameters are checked against the declaration first, and two
/// conversions are made: an Int where a Float is declared becomes a double, and a String where a
/// DType is declared is parsed as a dtype name. Throws DSLError naming the workload: an unknown
/// name (listing the registered ones), a wrong parameter count (listing the declaration), a
/// parameter of the wrong kind (naming it), or a builder error (prefixed with the workload and
/// its parameters), or a returned DAG that check_tensor_dag refuses.
TensorDAG make_workload(const std::string& name, const WorkloadParams& params);

}  // namespace tessel
