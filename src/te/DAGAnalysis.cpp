// Static analysis of a DAG for the sketch rules (te/DAGAnalysis.h has the definitions).
#include "tessel/te/DAGAnalysis.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "tessel/ir/Equality.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {

// How one read's indices use the reader's axes (DAGAnalysis.h, "simple").
struct Access {
    bool simple = true;
    bool missing = false;
    bool duplicated = false;
    bool same_order = true;
};

// `e` is `v`, `v + c`, `c + v` or `v - c` for an integer constant c.
bool is_shifted(const Expr& e, const Variable* v) {
    auto is_v = [v](const Expr& x) { return x.get() == v; };
    auto is_c = [](const Expr& x) { return x.as<IntImm>() || x.as<UIntImm>(); };
    if (is_v(e)) return true;
    if (const Add* a = e.as<Add>()) return (is_v(a->a) && is_c(a->b)) || (is_c(a->a) && is_v(a->b));
    if (const Sub* s = e.as<Sub>()) return is_v(s->a) && is_c(s->b);
    return false;
}

Access classify(const ComputeOpNode* reader, const std::vector<Expr>& indices) {
    Access acc;
    std::vector<int> count(reader->axis.size(), 0);
    int last = -1;
    for (const Expr& index : indices) {
        if (as_const_int(index)) continue;
        int found = -1;
        for (size_t a = 0; a < reader->axis.size() && found < 0; ++a)
            if (is_shifted(index, reader->axis[a].var().get())) found = static_cast<int>(a);
        if (found < 0) return Access{false, false, false, false};
        ++count[found];
        acc.same_order = acc.same_order && found >= last;
        last = found;
    }
    for (int c : count) {
        acc.missing = acc.missing || c == 0;
        acc.duplicated = acc.duplicated || c > 1;
    }
    return acc;
}

// Whether the bodies call exp, and whether they branch (Select, if_then_else).
std::pair<bool, bool> expensive_and_branches(const ComputeOpNode* c) {
    bool exp = false, branch = false;
    for (const Expr& b : c->body) {
        post_order_visit(b, [&](const IRNode* n) {
            if (n->node_type == IRNodeType::Select) branch = true;
            if (n->node_type != IRNodeType::Call) return;
            Intrinsic op = static_cast<const Call*>(n)->op;
            exp = exp || op == Intrinsic::exp;
            branch = branch || op == Intrinsic::if_then_else;
        });
    }
    return {exp, branch};
}

int64_t extent_or_minus_one(const IterVar& iv) {
    std::optional<int64_t> e = as_const_int(iv.dom().extent);
    return e ? *e : -1;
}

}  // namespace

DAGAnalysis::DAGAnalysis(const std::vector<Tensor>& outputs) {
    if (outputs.empty()) TESSEL_THROW(DSLError) << "DAGAnalysis: the DAG has no output";
    ops_ = topo_order(outputs);
    info_.resize(ops_.size());
    std::unordered_map<const OperationNode*, int> index;
    for (size_t i = 0; i < ops_.size(); ++i) index[ops_[i].get()] = static_cast<int>(i);
    for (const Tensor& t : outputs) info_[index.at(t.op().get())].output = true;
    for (size_t i = 0; i < ops_.size(); ++i) {
        const ComputeOpNode* c = as_compute(ops_[i]);
        if (!c) continue;
        for (const Tensor& t : op_inputs(ops_[i])) {
            int p = index.at(t.op().get());
            if (std::find(info_[i].producers.begin(), info_[i].producers.end(), p) ==
                info_[i].producers.end()) {
                info_[i].producers.push_back(p);
                info_[i].reads.emplace_back();
                info_[p].consumers.push_back(static_cast<int>(i));
            }
        }
        for (const Expr& b : c->body) {
            post_order_visit(b, [&](const IRNode* n) {
                if (n->node_type != IRNodeType::TensorRead) return;
                const TensorRead* r = static_cast<const TensorRead*>(n);
                int p = index.at(r->tensor.op().get());
                size_t k = std::find(info_[i].producers.begin(), info_[i].producers.end(), p) -
                           info_[i].producers.begin();
                info_[i].reads[k].push_back(r->indices);
            });
        }
        analyse(static_cast<int>(i));
    }
}

void DAGAnalysis::analyse(int op) {
    const ComputeOpNode* c = as_compute(ops_[op]);
    OpInfo& in = info_[op];
    bool strict = true;
    for (const auto& reads : in.reads) {
        for (const std::vector<Expr>& indices : reads) {
            Access a = classify(c, indices);
            in.simple_access = in.simple_access && a.simple;
            strict = strict && a.simple && a.same_order && !a.duplicated;
        }
    }
    auto [exp, branch] = expensive_and_branches(c);
    strict = strict && !exp && !branch;
    if (in.producers.empty()) strict = true;  // a constant tensor
    in.strictly_inlinable = strict && !in.output && c->reduce_axis.empty();

    int missing = 0;
    for (const auto& reads : in.reads) {
        std::unordered_set<const Variable*> used;
        for (const std::vector<Expr>& indices : reads)
            for (const Expr& e : indices)
                post_order_visit(e, [&](const IRNode* n) {
                    if (n->node_type == IRNodeType::Variable)
                        used.insert(static_cast<const Variable*>(n));
                });
        for (const IterVar& iv : c->axis) {
            int64_t extent = extent_or_minus_one(iv);
            if ((extent > 1 || extent < 0) && !used.count(iv.var().get())) {
                ++missing;
                break;
            }
        }
    }
    in.multi_level_tiling = missing >= 2 || (missing >= 1 && !c->reduce_axis.empty());
}

const DAGAnalysis::OpInfo& DAGAnalysis::info(int op) const {
    if (op < 0 || op >= num_ops())
        TESSEL_THROW(DSLError) << "DAGAnalysis: operation index " << op << " out of range (the DAG "
                               << "has " << num_ops() << " operations)";
    return info_[op];
}

int DAGAnalysis::index_of(const Operation& op) const {
    for (size_t i = 0; i < ops_.size(); ++i)
        if (ops_[i].same_as(op)) return static_cast<int>(i);
    TESSEL_THROW(DSLError) << "DAGAnalysis: operation '" << (op.defined() ? op->name : "?")
                           << "' is not part of the DAG";
}

bool DAGAnalysis::is_placeholder(int op) const {
    info(op);
    return as_placeholder(ops_[op]) != nullptr;
}
bool DAGAnalysis::is_output(int op) const {
    return info(op).output;
}
bool DAGAnalysis::has_reduction(int op) const {
    info(op);
    const ComputeOpNode* c = as_compute(ops_[op]);
    return c && !c->reduce_axis.empty();
}
const std::vector<int>& DAGAnalysis::producers(int op) const {
    return info(op).producers;
}
const std::vector<int>& DAGAnalysis::consumers(int op) const {
    return info(op).consumers;
}
bool DAGAnalysis::has_simple_access(int op) const {
    return info(op).simple_access;
}
bool DAGAnalysis::is_strictly_inlinable(int op) const {
    return info(op).strictly_inlinable;
}
bool DAGAnalysis::is_inlinable(int op) const {
    return !is_placeholder(op) && !is_output(op) && !has_reduction(op);
}
bool DAGAnalysis::needs_multi_level_tiling(int op) const {
    return info(op).multi_level_tiling;
}

namespace {
// Follows `next` (consumers or producers) from `op`, looking through inlined operations.
std::vector<int> through_inlined(int op, const std::vector<bool>& inlined,
                                 const std::function<const std::vector<int>&(int)>& next) {
    std::set<int> out;
    std::vector<int> stack = {op};
    std::unordered_set<int> seen;
    while (!stack.empty()) {
        int cur = stack.back();
        stack.pop_back();
        for (int n : next(cur)) {
            bool is_inlined = n < static_cast<int>(inlined.size()) && inlined[n];
            if (!is_inlined)
                out.insert(n);
            else if (seen.insert(n).second)
                stack.push_back(n);
        }
    }
    return {out.begin(), out.end()};
}
}  // namespace

std::vector<int> DAGAnalysis::consumers(int op, const std::vector<bool>& inlined) const {
    info(op);
    return through_inlined(op, inlined,
                           [this](int o) -> const std::vector<int>& { return info_[o].consumers; });
}

std::vector<int> DAGAnalysis::producers(int op, const std::vector<bool>& inlined) const {
    info(op);
    return through_inlined(op, inlined,
                           [this](int o) -> const std::vector<int>& { return info_[o].producers; });
}

bool DAGAnalysis::elementwise_match(int op, int target) const {
    info(target);
    int cur = op;
    while (cur != target) {
        const OpInfo& in = info(cur);
        if (in.consumers.size() != 1) return false;
        int next = in.consumers[0];
        const ComputeOpNode* from = as_compute(ops_[cur]);
        const ComputeOpNode* to = as_compute(ops_[next]);
        if (!from || !to) return false;
        std::vector<Expr> shape = op_shape(ops_[cur]), next_shape = op_shape(ops_[next]);
        if (shape.size() != next_shape.size()) return false;
        for (size_t d = 0; d < shape.size(); ++d)
            if (!structural_equal(shape[d], next_shape[d])) return false;
        const OpInfo& next_info = info_[next];
        size_t k = std::find(next_info.producers.begin(), next_info.producers.end(), cur) -
                   next_info.producers.begin();
        for (const std::vector<Expr>& indices : next_info.reads[k]) {
            Access a = classify(to, indices);
            if (!a.simple || a.missing || a.duplicated || !a.same_order) return false;
        }
        cur = next;
    }
    return true;
}

int DAGAnalysis::elementwise_consumer(int op, const std::vector<bool>& inlined) const {
    std::vector<int> cons = consumers(op, inlined);
    if (cons.size() != 1) return -1;
    int target = cons[0];
    if (!elementwise_match(op, target)) return -1;
    if (has_reduction(op) && has_reduction(target)) return -1;
    return target;
}

std::vector<int64_t> DAGAnalysis::spatial_extents(int op) const {
    info(op);
    std::vector<int64_t> out;
    if (const ComputeOpNode* c = as_compute(ops_[op])) {
        for (const IterVar& iv : c->axis) out.push_back(extent_or_minus_one(iv));
        return out;
    }
    for (const Expr& e : op_shape(ops_[op])) out.push_back(as_const_int(e).value_or(-1));
    return out;
}

std::vector<int64_t> DAGAnalysis::reduction_extents(int op) const {
    info(op);
    std::vector<int64_t> out;
    if (const ComputeOpNode* c = as_compute(ops_[op]))
        for (const IterVar& iv : c->reduce_axis) out.push_back(extent_or_minus_one(iv));
    return out;
}

double DAGAnalysis::flops(int op) const {
    info(op);
    return flop_count(ops_[op]);
}

}  // namespace tessel
