// Workloads: named, parameterised builders of tensor-expression DAGs, as TVM's
// auto_scheduler.register_workload. This header holds their vocabulary: parameter kinds and
// values, declarations, builders and workload keys, with the parameters' JSON. The registry that
// makes them by name is auto_schedule/task/Workload.h; the operator library lists its workloads
// as definitions (op/Workloads.h).
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

/// A declared parameter: its name (for messages) and kind. An optional parameter may be left out
/// of a workload's parameters (and so of its key); the builder then receives fewer of them. Only
/// trailing parameters are optional, so that a parameter added later with a default keeps the
/// keys of the instances made before it (the operator library's `out_dtype`).
struct WorkloadParamSpec {
    std::string name;
    ParamKind kind = ParamKind::Any;
    bool optional = false;
};

/// Builds a workload's DAG from parameters already checked against its declaration.
using WorkloadBuilder = std::function<TensorDAG(const WorkloadParams&)>;

/// A workload as a registry holds it: its name, declared parameters and builder.
struct WorkloadDefinition {
    std::string name;
    std::vector<WorkloadParamSpec> params;
    WorkloadBuilder builder;
};

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
