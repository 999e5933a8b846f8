#include "tessel/ir/IRMutator.h"

#include <type_traits>
#include <unordered_set>

namespace tessel {

Expr IRMutator::mutate(const Expr& e) {
    if (!e.defined()) return e;
    switch (e.node_type()) {
#define TESSEL_DISPATCH(T) \
    case IRNodeType::T: return visit(static_cast<const T*>(e.get()));
        TESSEL_FOR_EACH_EXPR_NODE(TESSEL_DISPATCH)
#undef TESSEL_DISPATCH
        default: TESSEL_CHECK(false) << "statement node in an Expr handle";
    }
    return e;
}

Stmt IRMutator::mutate(const Stmt& s) {
    if (!s.defined()) return s;
    switch (s.node_type()) {
#define TESSEL_DISPATCH(T) \
    case IRNodeType::T: return visit(static_cast<const T*>(s.get()));
        TESSEL_FOR_EACH_STMT_NODE(TESSEL_DISPATCH)
#undef TESSEL_DISPATCH
        default: TESSEL_CHECK(false) << "expression node in a Stmt handle";
    }
    return s;
}

bool IRMutator::mutate_all(const std::vector<Expr>& in, std::vector<Expr>* out) {
    bool changed = false;
    out->clear();
    out->reserve(in.size());
    for (const Expr& e : in) {
        out->push_back(mutate(e));
        changed = changed || !out->back().same_as(e);
    }
    return changed;
}

Expr IRMutator::visit(const IntImm* op) {
    return op;
}
Expr IRMutator::visit(const UIntImm* op) {
    return op;
}
Expr IRMutator::visit(const FloatImm* op) {
    return op;
}
Expr IRMutator::visit(const Variable* op) {
    return op;
}

Expr IRMutator::visit(const Cast* op) {
    Expr v = mutate(op->value);
    if (v.same_as(op->value)) return op;
    return Cast::make(op->type, v);
}

#define TESSEL_MUTATE_BINARY(T)                              \
    Expr IRMutator::visit(const T* op) {                     \
        Expr a = mutate(op->a), b = mutate(op->b);           \
        if (a.same_as(op->a) && b.same_as(op->b)) return op; \
        return T::make(a, b);                                \
    }
TESSEL_MUTATE_BINARY(Add)
TESSEL_MUTATE_BINARY(Sub)
TESSEL_MUTATE_BINARY(Mul)
TESSEL_MUTATE_BINARY(Div)
TESSEL_MUTATE_BINARY(Mod)
TESSEL_MUTATE_BINARY(FloorDiv)
TESSEL_MUTATE_BINARY(FloorMod)
TESSEL_MUTATE_BINARY(Min)
TESSEL_MUTATE_BINARY(Max)
TESSEL_MUTATE_BINARY(EQ)
TESSEL_MUTATE_BINARY(NE)
TESSEL_MUTATE_BINARY(LT)
TESSEL_MUTATE_BINARY(LE)
TESSEL_MUTATE_BINARY(GT)
TESSEL_MUTATE_BINARY(GE)
TESSEL_MUTATE_BINARY(And)
TESSEL_MUTATE_BINARY(Or)
#undef TESSEL_MUTATE_BINARY

Expr IRMutator::visit(const Not* op) {
    Expr a = mutate(op->a);
    if (a.same_as(op->a)) return op;
    return Not::make(a);
}

Expr IRMutator::visit(const Select* op) {
    Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
        return op;
    return Select::make(c, t, f);
}

Expr IRMutator::visit(const Ramp* op) {
    Expr b = mutate(op->base), s = mutate(op->stride);
    if (b.same_as(op->base) && s.same_as(op->stride)) return op;
    return Ramp::make(b, s, op->lanes);
}

Expr IRMutator::visit(const Broadcast* op) {
    Expr v = mutate(op->value);
    if (v.same_as(op->value)) return op;
    return Broadcast::make(v, op->lanes);
}

Expr IRMutator::visit(const Let* op) {
    Expr v = mutate(op->value), b = mutate(op->body);
    if (v.same_as(op->value) && b.same_as(op->body)) return op;
    return Let::make(op->var, v, b);
}

Expr IRMutator::visit(const Call* op) {
    std::vector<Expr> args;
    if (!mutate_all(op->args, &args)) return op;
    return Call::make(op->op, std::move(args));
}

Expr IRMutator::visit(const TensorRead* op) {
    std::vector<Expr> idx;
    if (!mutate_all(op->indices, &idx)) return op;
    return TensorRead::make(op->tensor, std::move(idx));
}

Expr IRMutator::visit(const Reduce* op) {
    bool changed = false;
    std::vector<IterVar> axis;
    for (const IterVar& iv : op->axis) {
        Expr mn = mutate(iv.dom().min), ext = mutate(iv.dom().extent);
        if (mn.same_as(iv.dom().min) && ext.same_as(iv.dom().extent)) {
            axis.push_back(iv);
        } else {
            axis.emplace_back(iv.var(), Range(mn, ext), iv.kind());
            changed = true;
        }
    }
    std::vector<Expr> source;
    changed = mutate_all(op->source, &source) || changed;
    Expr cond = mutate(op->condition);
    changed = changed || !cond.same_as(op->condition);
    if (!changed) return op;
    return Reduce::make(op->combiner, std::move(source), std::move(axis), cond, op->value_index);
}

Expr IRMutator::visit(const Load* op) {
    Expr i = mutate(op->index), p = mutate(op->predicate);
    if (i.same_as(op->index) && p.same_as(op->predicate)) return op;
    return Load::make(op->type.element_of().with_lanes(i.type().lanes), op->buffer_var, i, p);
}

Expr IRMutator::visit(const BufferLoad* op) {
    std::vector<Expr> idx;
    if (!mutate_all(op->indices, &idx)) return op;
    return BufferLoad::make(op->buffer, std::move(idx));
}

Stmt IRMutator::visit(const LetStmt* op) {
    Expr v = mutate(op->value);
    Stmt b = mutate(op->body);
    if (v.same_as(op->value) && b.same_as(op->body)) return op;
    return LetStmt::make(op->var, v, b);
}

Stmt IRMutator::visit(const AttrStmt* op) {
    Expr v = mutate(op->value);
    Stmt b = mutate(op->body);
    if (v.same_as(op->value) && b.same_as(op->body)) return op;
    return AttrStmt::make(op->key, v, b);
}

Stmt IRMutator::visit(const AssertStmt* op) {
    Expr c = mutate(op->condition);
    if (c.same_as(op->condition)) return op;
    return AssertStmt::make(c, op->message);
}

Stmt IRMutator::visit(const For* op) {
    Expr mn = mutate(op->min), ext = mutate(op->extent);
    Stmt b = mutate(op->body);
    if (mn.same_as(op->min) && ext.same_as(op->extent) && b.same_as(op->body)) return op;
    return For::make(op->loop_var, mn, ext, op->kind, b, op->thread_tag);
}

Stmt IRMutator::visit(const Store* op) {
    Expr v = mutate(op->value), i = mutate(op->index), p = mutate(op->predicate);
    if (v.same_as(op->value) && i.same_as(op->index) && p.same_as(op->predicate)) return op;
    return Store::make(op->buffer_var, v, i, p);
}

Stmt IRMutator::visit(const BufferStore* op) {
    Expr v = mutate(op->value);
    std::vector<Expr> idx;
    bool changed = mutate_all(op->indices, &idx);
    if (!changed && v.same_as(op->value)) return op;
    return BufferStore::make(op->buffer, v, std::move(idx));
}

Stmt IRMutator::visit(const Allocate* op) {
    std::vector<Expr> ext;
    bool changed = mutate_all(op->extents, &ext);
    Stmt b = mutate(op->body);
    if (!changed && b.same_as(op->body)) return op;
    return Allocate::make(op->buffer_var, op->dtype, std::move(ext), op->scope, b);
}

Stmt IRMutator::visit(const Seq* op) {
    std::vector<Stmt> stmts;
    bool changed = false;
    for (const Stmt& s : op->stmts) {
        stmts.push_back(mutate(s));
        changed = changed || !stmts.back().same_as(s);
    }
    if (!changed) return op;
    return Seq::make(std::move(stmts));
}

Stmt IRMutator::visit(const IfThenElse* op) {
    Expr c = mutate(op->condition);
    Stmt t = mutate(op->then_case), e = mutate(op->else_case);
    if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return op;
    return IfThenElse::make(c, t, e);
}

Stmt IRMutator::visit(const Evaluate* op) {
    Expr v = mutate(op->value);
    if (v.same_as(op->value)) return op;
    return Evaluate::make(v);
}

// ---------------------------------------------------------------------------------------------

namespace {
// Variables bound inside the tree (For, Let, LetStmt, Reduce axes) are not free there: while
// inside a binder of a mapped variable, that variable is left alone.
class Substituter : public IRMutator {
public:
    explicit Substituter(const VarMap& map) : map_(map) {}
    using IRMutator::visit;

protected:
    Expr visit(const Let* op) override {
        return shadowing({op->var.get()}, [&] { return IRMutator::visit(op); });
    }
    Stmt visit(const LetStmt* op) override {
        return shadowing({op->var.get()}, [&] { return IRMutator::visit(op); });
    }
    Stmt visit(const For* op) override {
        return shadowing({op->loop_var.get()}, [&] { return IRMutator::visit(op); });
    }
    Expr visit(const Reduce* op) override {
        std::vector<const Variable*> vars;
        for (const IterVar& iv : op->axis) vars.push_back(iv.var().get());
        return shadowing(vars, [&] { return IRMutator::visit(op); });
    }

    Expr visit(const Variable* op) override {
        auto it = map_.find(op);
        if (it == map_.end() || shadowed_.count(op)) return op;
        TESSEL_CHECK(it->second.type() == op->type)
            << "substitute " << op->name << " (" << op->type << ") by a " << it->second.type();
        return it->second;
    }

private:
    template <typename F>
    std::invoke_result_t<F> shadowing(const std::vector<const Variable*>& vars, F&& f) {
        std::vector<const Variable*> added;
        for (const Variable* v : vars)
            if (map_.count(v) && shadowed_.insert(v).second) added.push_back(v);
        auto result = f();
        for (const Variable* v : added) shadowed_.erase(v);
        return result;
    }

    const VarMap& map_;
    std::unordered_set<const Variable*> shadowed_;
};
}  // namespace

Expr substitute(const Expr& e, const VarMap& replacements) {
    if (replacements.empty()) return e;
    return Substituter(replacements).mutate(e);
}
Stmt substitute(const Stmt& s, const VarMap& replacements) {
    if (replacements.empty()) return s;
    return Substituter(replacements).mutate(s);
}
Expr substitute(const Expr& e, const Var& v, const Expr& replacement) {
    return substitute(e, VarMap{{v.get(), replacement}});
}
Stmt substitute(const Stmt& s, const Var& v, const Expr& replacement) {
    return substitute(s, VarMap{{v.get(), replacement}});
}

}  // namespace tessel
