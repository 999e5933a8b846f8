// TensorDAG: the inputs and outputs of a computation in argument order.
#include "tessel/te/TensorDAG.h"

#include <unordered_set>

namespace tessel {

std::vector<Tensor> TensorDAG::args() const {
    std::vector<Tensor> a = inputs;
    a.insert(a.end(), outputs.begin(), outputs.end());
    return a;
}

namespace {
void check_outputs(const TensorDAG& dag, const std::string& who) {
    if (dag.outputs.empty()) TESSEL_THROW(DSLError) << who << ": the DAG has no output";
    std::unordered_set<Tensor, TensorHash, TensorEqual> seen;
    for (size_t i = 0; i < dag.outputs.size(); ++i) {
        const Tensor& t = dag.outputs[i];
        if (!t.defined()) TESSEL_THROW(DSLError) << who << ": output " << i << " is undefined";
        if (!as_compute(t.op()))
            TESSEL_THROW(DSLError)
                << who << ": output " << i << " ('" << t.name() << "') is not a computed tensor";
        if (!seen.insert(t).second)
            TESSEL_THROW(DSLError)
                << who << ": output " << i << " ('" << t.name() << "') is listed twice";
    }
}
}  // namespace

TensorDAG make_tensor_dag(const std::vector<Tensor>& outputs, const std::string& who) {
    TensorDAG dag;
    dag.outputs = outputs;
    check_outputs(dag, who);
    for (const Operation& op : topo_order(outputs))
        if (as_placeholder(op)) dag.inputs.push_back(op_output(op, 0));
    return dag;
}

void check_tensor_dag(const TensorDAG& dag, const std::string& who) {
    check_outputs(dag, who);
    std::unordered_set<const OperationNode*> placeholders;
    for (const Operation& op : topo_order(dag.outputs))
        if (as_placeholder(op)) placeholders.insert(op.get());
    std::unordered_set<const OperationNode*> listed;
    for (size_t i = 0; i < dag.inputs.size(); ++i) {
        const Tensor& t = dag.inputs[i];
        if (!t.defined()) TESSEL_THROW(DSLError) << who << ": input " << i << " is undefined";
        if (!placeholders.count(t.op().get()))
            TESSEL_THROW(DSLError) << who << ": input " << i << " ('" << t.name()
                                   << "') is not a placeholder the outputs read";
        if (!listed.insert(t.op().get()).second)
            TESSEL_THROW(DSLError)
                << who << ": input " << i << " ('" << t.name() << "') is listed twice";
    }
    for (const Operation& op : topo_order(dag.outputs))
        if (as_placeholder(op) && !listed.count(op.get()))
            TESSEL_THROW(DSLError) << who << ": placeholder '" << op->name
                                   << "' is read by the outputs but missing from the inputs";
}

}  // namespace tessel
