// A tensor-expression DAG seen as a function: its inputs and outputs in argument order.
//
// What a workload builder returns (auto_schedule/task/Workload.h), what dag_to_json writes and
// dag_from_json reads back (te/Serialize.h): the outputs alone define the computation, the inputs
// add the order in which a kernel takes the placeholders (lower(), build() take args()).
#pragma once

#include <string>
#include <vector>

#include "tessel/te/Operation.h"

namespace tessel {

/// The tensors of one computation: every placeholder the outputs read, then the outputs.
struct TensorDAG {
    std::vector<Tensor> inputs;   ///< the placeholders, in argument order
    std::vector<Tensor> outputs;  ///< the computed tensors, in argument order

    /// inputs then outputs: the argument list of lower() and build().
    std::vector<Tensor> args() const;
};

/// The DAG of `outputs`, its inputs being the placeholders they read in topological order
/// (topo_order). Throws DSLError as check_tensor_dag does, naming `who`.
TensorDAG make_tensor_dag(const std::vector<Tensor>& outputs,
                          const std::string& who = "make_tensor_dag");

/// `dag` with the inputs named in `constant` marked constant (weights, PlaceholderOpNode::constant)
/// and the others as they are: the operations reading them are rebuilt, so the result is a new
/// DAG (another hash) and `dag` is unchanged. DSLError, starting with `who`, for a name that is
/// no input (listing the inputs).
TensorDAG mark_constant(const TensorDAG& dag, const std::vector<std::string>& constant,
                        const std::string& who = "mark_constant");

/// The names of `dag`'s constant inputs, in argument order.
std::vector<std::string> constant_inputs(const TensorDAG& dag);

/// Throws DSLError, its message starting with `who`, unless `dag` has at least one output, every
/// output is a defined tensor of a compute operation listed once, and `inputs` lists every
/// placeholder the outputs read exactly once, and nothing else.
void check_tensor_dag(const TensorDAG& dag, const std::string& who);

}  // namespace tessel
