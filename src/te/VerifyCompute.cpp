// The checks compute() makes on its bodies, so that every misuse is reported when the compute is
// declared, naming the compute and the axis: a Reduce below the top of a body, outputs that are
// different reductions, a reduce axis reduced twice or used outside its reduction, an axis of
// another compute, and bodies that are not scalar data values.
#include <unordered_map>
#include <unordered_set>

#include "TeInternal.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel::internal {

namespace {
// Every distinct Reduce node of the bodies, in visiting order.
std::vector<const Reduce*> collect_reduces(const std::vector<Expr>& body) {
    std::vector<const Reduce*> out;
    std::unordered_set<const IRNode*> seen;
    for (const Expr& b : body) {
        post_order_visit(b, [&](const IRNode* n) {
            if (n->node_type == IRNodeType::Reduce && seen.insert(n).second)
                out.push_back(static_cast<const Reduce*>(n));
        });
    }
    return out;
}

// Two Reduce nodes of one reducer call: same combiner, sources, axes and condition.
bool same_reduction(const Reduce* a, const Reduce* b) {
    bool same_condition =
        a->condition.same_as(b->condition) || (is_one(a->condition) && is_one(b->condition));
    if (!a->combiner.same_as(b->combiner) || !same_condition) return false;
    if (a->source.size() != b->source.size() || a->axis.size() != b->axis.size()) return false;
    for (size_t i = 0; i < a->source.size(); ++i)
        if (!a->source[i].same_as(b->source[i])) return false;
    for (size_t i = 0; i < a->axis.size(); ++i)
        if (!a->axis[i].same_as(b->axis[i])) return false;
    return true;
}

// No axis listed twice by a reduction, and no axis reduced by two different reductions.
void check_reduce_axes_once(const std::string& name, const std::vector<const Reduce*>& reduces) {
    std::unordered_map<const Variable*, const Reduce*> owner;
    for (const Reduce* r : reduces) {
        std::unordered_set<const Variable*> listed;
        for (const IterVar& iv : r->axis) {
            const Variable* v = iv.var().get();
            if (!listed.insert(v).second)
                TESSEL_THROW(DSLError) << "compute '" << name << "': reduce axis '" << v->name
                                       << "' is listed twice in one reduction";
            auto [it, fresh] = owner.emplace(v, r);
            if (!fresh && !same_reduction(it->second, r))
                TESSEL_THROW(DSLError) << "compute '" << name << "': reduce axis '" << v->name
                                       << "' is reduced twice (by two reductions in one body)";
        }
    }
}

bool contains_reduce(const Expr& e) {
    bool found = false;
    post_order_visit(e,
                     [&](const IRNode* n) { found = found || n->node_type == IRNodeType::Reduce; });
    return found;
}

// Each body is either one Reduce with no Reduce below it, or free of Reduces.
void check_reduce_at_top(const std::string& name, const std::vector<Expr>& body) {
    for (size_t v = 0; v < body.size(); ++v) {
        bool nested = false;
        if (const Reduce* r = body[v].as<Reduce>()) {
            for (const Expr& s : r->source) nested = nested || contains_reduce(s);
            nested = nested || contains_reduce(r->condition);
            for (const IterVar& iv : r->axis)
                nested =
                    nested || contains_reduce(iv.dom().min) || contains_reduce(iv.dom().extent);
        } else {
            nested = contains_reduce(body[v]);
        }
        if (nested)
            TESSEL_THROW(DSLError)
                << "compute '" << name << "': output " << v << " has a reduction inside another "
                << "expression; a Reduce must be the whole body of a compute (compute the "
                << "reduction in its own compute and use its result)";
    }
}

// With several outputs: all the same reduction, or none a Reduce.
void check_outputs_agree(const std::string& name, const std::vector<Expr>& body) {
    const Reduce* first = body[0].as<Reduce>();
    for (size_t v = 1; v < body.size(); ++v) {
        const Reduce* r = body[v].as<Reduce>();
        if ((first == nullptr) != (r == nullptr))
            TESSEL_THROW(DSLError) << "compute '" << name << "': output " << (first ? v : 0)
                                   << " is not a Reduce but output " << (first ? 0 : v)
                                   << " is; either every output is a Reduce or none is";
        if (first && !same_reduction(first, r))
            TESSEL_THROW(DSLError) << "compute '" << name << "': outputs 0 and " << v
                                   << " are different reductions; the Reduces of one compute "
                                   << "must come from one reducer call";
    }
}
}  // namespace

namespace {
// Reduce-axis variables only inside a Reduce over them; compute-axis variables only in their own
// compute.
class AxisUseChecker : public IRVisitor {
public:
    AxisUseChecker(const std::string& name, const std::vector<IterVar>& axis) : name_(name) {
        for (const IterVar& iv : axis) own_.insert(iv.var().get());
    }
    using IRVisitor::visit;

protected:
    void visit(const Variable* op) override {
        std::optional<IterVarKind> kind = axis_var_kind(op);
        if (kind == IterVarKind::Reduce && bound_.count(op) == 0)
            TESSEL_THROW(DSLError) << "compute '" << name_ << "': reduce axis '" << op->name
                                   << "' is used outside a reduction over it; use it inside "
                                   << "sum(..., {" << op->name << "}) or another reducer";
        if (kind == IterVarKind::DataPar && own_.count(op) == 0)
            TESSEL_THROW(DSLError) << "compute '" << name_ << "': axis '" << op->name
                                   << "' belongs to another compute; use this compute's own "
                                   << "index variables";
    }
    void visit(const Reduce* op) override {
        for (const IterVar& iv : op->axis) {
            visit(iv.dom().min);
            visit(iv.dom().extent);
        }
        for (const IterVar& iv : op->axis) bound_.insert(iv.var().get());
        for (const Expr& s : op->source) visit(s);
        visit(op->condition);
        for (const IterVar& iv : op->axis) bound_.erase(iv.var().get());
    }

private:
    const std::string& name_;
    std::unordered_set<const Variable*> own_;
    std::unordered_set<const Variable*> bound_;
};

// A body must be a scalar data value.
void check_body_value(const std::string& name, size_t v, const Expr& e) {
    if (!e.defined())
        TESSEL_THROW(DSLError) << "compute '" << name << "': the function returned an undefined "
                               << "expression for output " << v;
    if (e.type().is_handle() || !e.type().is_scalar())
        TESSEL_THROW(DSLError) << "compute '" << name << "': output " << v << " has type "
                               << e.type() << "; tensor elements must be scalar data values";
}
}  // namespace

std::vector<IterVar> verify_compute_body(const std::string& name, const std::vector<IterVar>& axis,
                                         const std::vector<Expr>& body) {
    if (body.empty())
        TESSEL_THROW(DSLError) << "compute '" << name << "': the function returned no expression";
    for (size_t v = 0; v < body.size(); ++v) check_body_value(name, v, body[v]);
    check_reduce_axes_once(name, collect_reduces(body));
    check_reduce_at_top(name, body);
    check_outputs_agree(name, body);
    AxisUseChecker checker(name, axis);
    for (const Expr& b : body) checker.visit(b);
    if (const Reduce* r = body[0].as<Reduce>()) return r->axis;
    return {};
}

}  // namespace tessel::internal
