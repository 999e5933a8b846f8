// The operation DAG: the inputs of an operation and a deterministic topological order.
#include <unordered_set>

#include "TeInternal.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

std::vector<Tensor> op_inputs(const Operation& op) {
    std::vector<Tensor> inputs;
    const ComputeOpNode* c = as_compute(op);
    if (!c) return inputs;
    std::unordered_set<Tensor, TensorHash, TensorEqual> seen;
    for (const Expr& body : c->body) {
        post_order_visit(body, [&](const IRNode* n) {
            if (n->node_type != IRNodeType::TensorRead) return;
            const Tensor& t = static_cast<const TensorRead*>(n)->tensor;
            if (seen.insert(t).second) inputs.push_back(t);
        });
    }
    return inputs;
}

std::vector<Operation> topo_order(const std::vector<Tensor>& outputs) {
    // Iterative depth-first search, so that long chains of operations cannot overflow the stack.
    struct Frame {
        Operation op;
        std::vector<Tensor> inputs;
        size_t next = 0;
    };
    std::vector<Operation> order;
    std::unordered_set<const OperationNode*> visited;
    for (size_t k = 0; k < outputs.size(); ++k) {
        if (!outputs[k].defined()) TESSEL_THROW(DSLError) << "topo_order: output " << k << " is undefined";
        if (!visited.insert(outputs[k].op().get()).second) continue;
        std::vector<Frame> stack;
        stack.push_back({outputs[k].op(), op_inputs(outputs[k].op())});
        while (!stack.empty()) {
            Frame& top = stack.back();
            if (top.next == top.inputs.size()) {
                order.push_back(top.op);
                stack.pop_back();
                continue;
            }
            Operation in = top.inputs[top.next++].op();
            if (visited.insert(in.get()).second) stack.push_back({in, op_inputs(in)});
        }
    }
    return order;
}

}  // namespace tessel
