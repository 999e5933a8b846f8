// TensorDAG: the inputs and outputs of a computation in argument order.
#include "tessel/te/TensorDAG.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "tessel/ir/IRMutator.h"

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
// Redirects reads of the operations that are keys of `map` to the mapped operation's output.
class ReplaceReads : public IRMutator {
public:
    explicit ReplaceReads(const std::map<const OperationNode*, Operation>& m) : map_(m) {}
    using IRMutator::visit;

protected:
    Expr visit(const TensorRead* op) override {
        Expr e = IRMutator::visit(op);
        const auto* r = e.as<TensorRead>();
        auto it = map_.find(r->tensor.op().get());
        if (it == map_.end()) return e;
        return TensorRead::make(op_output(it->second, r->tensor.value_index()), r->indices);
    }

private:
    const std::map<const OperationNode*, Operation>& map_;
};
}  // namespace

TensorDAG mark_constant(const TensorDAG& dag, const std::vector<std::string>& constant,
                        const std::string& who) {
    check_tensor_dag(dag, who);
    std::map<const OperationNode*, Operation> map;
    for (const std::string& name : constant) {
        auto it = std::find_if(dag.inputs.begin(), dag.inputs.end(),
                               [&](const Tensor& t) { return t.op()->name == name; });
        if (it == dag.inputs.end()) {
            std::string list;
            for (const Tensor& t : dag.inputs) list += (list.empty() ? "" : ", ") + t.op()->name;
            TESSEL_THROW(DSLError)
                << who << ": '" << name << "' is not an input of the DAG (inputs: " << list << ")";
        }
        const PlaceholderOpNode* p = as_placeholder(it->op());
        if (p->constant) continue;
        map[p] = Operation(new PlaceholderOpNode(p->name, p->shape, p->dtype, true));
    }
    if (map.empty()) return dag;
    ReplaceReads replace(map);
    for (const Operation& op : topo_order(dag.outputs)) {
        const ComputeOpNode* c = as_compute(op);
        if (!c) continue;
        std::vector<Expr> body;
        bool changed = false;
        for (const Expr& b : c->body) {
            body.push_back(replace.mutate(b));
            changed = changed || !body.back().same_as(b);
        }
        if (changed)
            map[op.get()] = Operation(new ComputeOpNode(c->name, c->axis, c->reduce_axis, body));
    }
    auto rebuilt = [&](const Tensor& t) {
        auto it = map.find(t.op().get());
        return it == map.end() ? t : op_output(it->second, t.value_index());
    };
    TensorDAG out;
    for (const Tensor& t : dag.inputs) out.inputs.push_back(rebuilt(t));
    for (const Tensor& t : dag.outputs) out.outputs.push_back(rebuilt(t));
    return out;
}

std::vector<std::string> constant_inputs(const TensorDAG& dag) {
    std::vector<std::string> names;
    for (const Tensor& t : dag.inputs)
        if (const PlaceholderOpNode* p = as_placeholder(t.op()); p && p->constant)
            names.push_back(p->name);
    return names;
}

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
