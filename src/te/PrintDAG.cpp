#include "tessel/te/PrintDAG.h"

#include <sstream>

#include "tessel/ir/IRPrinter.h"
#include "tessel/te/Operation.h"

namespace tessel {

namespace {
void print_shape(std::ostream& os, IRPrinter& p, const std::vector<Expr>& shape) {
    os << "(";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) os << ", ";
        p.print(shape[i]);
    }
    os << (shape.size() == 1 ? ",)" : ")");
}

// ", 1048576 flops", or nothing when the domain is symbolic.
std::string flops_note(const Operation& op) {
    try {
        return ", " + std::to_string(static_cast<int64_t>(flop_count(op))) + " flops";
    } catch (const DSLError&) {
        return "";
    }
}

void print_compute(std::ostream& os, IRPrinter& p, const Operation& op) {
    const ComputeOpNode* c = as_compute(op);
    for (int v = 0; v < op_num_outputs(op); ++v) {
        Tensor t = op_output(op, v);
        p.print(t);
        os << "[";
        for (size_t i = 0; i < c->axis.size(); ++i) {
            if (i) os << ", ";
            p.print(c->axis[i].var());
        }
        os << "] = ";
        p.print(c->body[v]);
        os << "  # " << t.dtype() << flops_note(op) << "\n";
    }
}
}  // namespace

std::string dag_to_string(const std::vector<Tensor>& outputs) {
    std::ostringstream os;
    IRPrinter p(os);
    for (const Operation& op : topo_order(outputs)) {
        if (const PlaceholderOpNode* ph = as_placeholder(op)) {
            p.print(op_output(op, 0));
            os << " = placeholder(";
            print_shape(os, p, ph->shape);
            os << ", " << ph->dtype << (ph->constant ? ", constant" : "") << ")\n";
        } else {
            print_compute(os, p, op);
        }
    }
    return os.str();
}

}  // namespace tessel
