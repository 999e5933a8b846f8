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
// Built-in workloads (docs/workloads.md lists them with their parameters) are registered before
// the first use of the registry; Python registers more with @tessel.register_workload. The
// registry is thread-safe; builders run outside its lock (a builder may use the registry).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "tessel/te/TensorDAG.h"

namespace tessel {

/// The kind of a workload parameter.
enum class ParamKind : uint8_t {
    Int,      ///< a 64-bit integer
    Float,    ///< a double
    String,   ///< a string
    DType,    ///< a data type (Type)
    IntList,  ///< a list of 64-bit integers
    Any,      ///< any of the above (parameters of Python workloads)
};
/// "int", "float", "string", "dtype", "int list", "any".
const char* param_kind_name(ParamKind kind);

/// One parameter value.
using WorkloadParam = std::variant<int64_t, double, std::string, Type, std::vector<int64_t>>;
/// The parameters of one workload instance, in declaration order.
using WorkloadParams = std::vector<WorkloadParam>;

/// The kind of a value (never Any).
ParamKind param_kind(const WorkloadParam& value);
/// The value for messages: 512, 0.5, "NCHW", float32, [3, 3].
std::string param_to_string(const WorkloadParam& value);

/// A declared parameter: its name (for messages) and kind.
struct WorkloadParamSpec {
    std::string name;
    ParamKind kind = ParamKind::Any;
};

/// Builds a workload's DAG from parameters already checked against its declaration.
using WorkloadBuilder = std::function<TensorDAG(const WorkloadParams&)>;

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

/// Parameters as a JSON array, and back: ints as JSON integers, floats as JSON numbers with a
/// fraction or exponent (non-finite ones as {"float": "inf"}, "-inf" or "nan"), strings as JSON
/// strings, dtypes as {"dtype": "float32"}, int lists as arrays. Reading back gives equal values
/// of the same kinds; malformed text is a DSLError.
std::string workload_params_to_json(const WorkloadParams& params);
WorkloadParams workload_params_from_json(const std::string& text);

/// The key of a workload instance, as TVM's workload_key: the JSON array of the name followed by
/// the parameters, e.g. ["matmul", 512, 512, 512, {"dtype": "float32"}].
std::string workload_key(const std::string& name, const WorkloadParams& params);
/// Splits a workload key into name and parameters; DSLError if it is malformed.
std::pair<std::string, WorkloadParams> parse_workload_key(const std::string& key);

}  // namespace tessel
