// The simplifier's driver: the Analyzer's bindings, the bottom-up rewrite loop and the dispatch
// of rule tables by node type.
#include "tessel/arith/Simplify.h"

#include <array>

#include "ConstFold.h"
#include "ExprEqual.h"
#include "IntMath.h"
#include "Simplifier.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

// ---------------------------------------------------------------------------------------------
// Analyzer

void Analyzer::bind(const Var& v, const Range& r) {
    bind(v, Interval::from_range(r));
}

void Analyzer::bind(const Var& v, int64_t min, int64_t max) {
    bind(v, Interval(make_const(v.type(), min), make_const(v.type(), max)));
}

void Analyzer::bind(const Var& v, const Interval& bounds) {
    scope_[v.get()] = bounds;
    ConstInterval c;
    if (bounds.min.defined()) c.min = internal::find_const_bounds(bounds.min, const_).min;
    if (bounds.max.defined()) c.max = internal::find_const_bounds(bounds.max, const_).max;
    const_[v.get()] = c;
}

void Analyzer::bind_modular(const Var& v, const ModularSet& m) {
    modular_[v.get()] = m;
}

void Analyzer::unbind(const Var& v) {
    scope_.erase(v.get());
    const_.erase(v.get());
    modular_.erase(v.get());
}

Expr Analyzer::simplify(const Expr& e, const SimplifyOptions& options) const {
    if (!e.defined()) return e;
    return internal::Simplifier(*this, options).mutate(e);
}

Stmt Analyzer::simplify(const Stmt& s, const SimplifyOptions& options) const {
    if (!s.defined()) return s;
    return internal::Simplifier(*this, options).mutate(s);
}

bool Analyzer::can_prove(const Expr& cond) const {
    return tessel::can_prove(cond, scope_);
}

ConstInterval Analyzer::const_bounds(const Expr& e) const {
    return internal::find_const_bounds(e, const_);
}

Expr simplify(const Expr& e) {
    return Analyzer().simplify(e);
}
Stmt simplify(const Stmt& s, const SimplifyOptions& options) {
    return Analyzer().simplify(s, options);
}

namespace internal {

// ---------------------------------------------------------------------------------------------
// Rule dispatch: one bucket per (type class, root node type), built once.

namespace {
constexpr size_t kNumNodes = static_cast<size_t>(IRNodeType::BufferLoad) + 1;
using Buckets = std::array<std::vector<const Rule*>, kNumNodes>;

Buckets bucket(const std::vector<Rule>& rules) {
    Buckets b;
    for (const Rule& r : rules) b[static_cast<size_t>(r.lhs->node)].push_back(&r);
    return b;
}

const std::vector<const Rule*>& rules_for(const Expr& e) {
    static const Buckets int_b = bucket(int_rules());
    static const Buckets float_b = bucket(float_rules());
    static const Buckets bool_b = bucket(bool_rules());
    const Expr *a, *b;
    Type t = binary_operands(e, &a, &b) ? a->type() : e.type();
    const Buckets& table = t.is_float() ? float_b : t.is_bool() ? bool_b : int_b;
    return table[static_cast<size_t>(e.node_type())];
}
}  // namespace

// ---------------------------------------------------------------------------------------------
// Simplifier

Simplifier::Simplifier(const Analyzer& analyzer, const SimplifyOptions& options)
    : options_(options),
      const_scope_(analyzer.const_scope()),
      modular_(analyzer.modular_scope()),
      symbolic_(analyzer.scope()) {}

Expr Simplifier::mutate(const Expr& e) {
    if (!e.defined()) return e;
    if (done_.count(e.get())) return e;
    Expr r = rewrite(IRMutator::mutate(e));
    done_.emplace(r.get(), r);
    return r;
}

Expr Simplifier::apply_rules(const Expr& e) {
    if (const auto* s = e.as<Select>()) {
        // Rules on selects assume the condition has the values' lanes.
        if (s->condition.type().lanes != e.type().lanes) return Expr();
    }
    for (const Rule* r : rules_for(e)) {
        Expr out = apply_rule(*r, e, *this);
        if (out.defined()) return out;
    }
    return Expr();
}

Expr Simplifier::rewrite(const Expr& e) {
    // Inside a tensor-core operand a swizzle of a constant stays a call (the operand names its
    // buffer's swizzle by it); whole cycles still move out of a variable one.
    const Call* call = e.as<Call>();
    if (tile_operands_ > 0 && call && call->op == Intrinsic::swizzle && as_const_int(call->args[0]))
        return e;
    Expr folded = const_fold(e);
    if (folded.defined()) return folded;
    if (steps_ >= kMaxSteps) return e;
    Expr r = apply_rules(e);
    if (!r.defined()) r = rewrite_builtin(e);
    if (!r.defined() || expr_equal(r, e)) return e;
    ++steps_;
    return mutate(r);
}

ConstInterval Simplifier::const_bounds(const Expr& e) {
    if (bounds_cache_.size() > 100000) {
        bounds_cache_.clear();
        bounds_cache_keep_.clear();
    }
    size_t before = bounds_cache_.size();
    ConstInterval r = find_const_bounds(e, const_scope_, &bounds_cache_);
    if (bounds_cache_.size() != before) bounds_cache_keep_.push_back(e);
    return r;
}

ModularSet Simplifier::modular(const Expr& e) {
    return modular_set_of(e, modular_);
}

ConstInterval Simplifier::linear_bounds(const LinearForm& f) {
    int128 lo = f.constant, hi = f.constant;
    for (const LinearTerm& t : f.terms) {
        ConstInterval b = const_bounds(t.term);
        if (!b.min || !b.max) return {};
        int128 p = int128(*b.min) * t.coeff, q = int128(*b.max) * t.coeff;
        lo += std::min(p, q);
        hi += std::max(p, q);
    }
    ConstInterval r;
    r.min = fit64(lo);
    r.max = fit64(hi);
    return r;
}

namespace {
// Symbolic proofs run the simplifier again; they do not nest (per thread).
thread_local int symbolic_proof_depth = 0;
}  // namespace

bool Simplifier::prove(const Expr& cond) {
    Expr c = rewrite_compare(cond);
    return c.defined() && is_const_int(c, 1);
}

std::optional<bool> Simplifier::symbolic_decide(const Expr& cond) {
    if (symbolic_proof_depth > 0) return std::nullopt;
    bool useful = false;
    for (const auto& [v, i] : symbolic_) {
        useful = useful || (i.min.defined() && !const_bits(i.min)) ||
                 (i.max.defined() && !const_bits(i.max));
    }
    if (!useful) return std::nullopt;
    ++symbolic_proof_depth;
    std::optional<bool> r;
    try {
        if (tessel::can_prove(cond, symbolic_)) {
            r = true;
        } else if (tessel::can_prove(Not::make(cond), symbolic_)) {
            r = false;
        }
    } catch (...) {
        --symbolic_proof_depth;
        throw;
    }
    --symbolic_proof_depth;
    return r;
}

void Simplifier::push_binding(const Var& v, const Interval& symbolic, const ConstInterval& c,
                              const ModularSet& m) {
    const Variable* p = v.get();
    Saved s{p, const_scope_.count(p) > 0, modular_.count(p) > 0, symbolic_.count(p) > 0, {}, {},
            {}};
    if (s.had_const) s.c = const_scope_[p];
    if (s.had_modular) s.m = modular_[p];
    if (s.had_symbolic) s.s = symbolic_[p];
    saved_.push_back(s);
    bounds_cache_.clear();
    bounds_cache_keep_.clear();
    const_scope_[p] = c;
    modular_[p] = m;
    if (symbolic.min.defined() || symbolic.max.defined()) {
        symbolic_[p] = symbolic;
    } else {
        symbolic_.erase(p);
    }
}

void Simplifier::pop_binding(const Var& v) {
    Saved s = saved_.back();
    saved_.pop_back();
    TESSEL_CHECK(s.var == v.get()) << "unbalanced simplifier bindings";
    bounds_cache_.clear();
    bounds_cache_keep_.clear();
    if (s.had_const)
        const_scope_[s.var] = s.c;
    else
        const_scope_.erase(s.var);
    if (s.had_modular)
        modular_[s.var] = s.m;
    else
        modular_.erase(s.var);
    if (s.had_symbolic)
        symbolic_[s.var] = s.s;
    else
        symbolic_.erase(s.var);
}

Expr Simplifier::visit(const Let* op) {
    Expr value = mutate(op->value);
    if (const_bits(value) || as_const_float(value) || value.as<Variable>()) {
        return mutate(substitute(op->body, op->var, value));
    }
    push_binding(op->var, Interval::single_point(value), const_bounds(value), modular(value));
    Expr body = mutate(op->body);
    pop_binding(op->var);
    if (!uses_var(body, op->var)) return body;
    if (value.same_as(op->value) && body.same_as(op->body)) return op;
    return Let::make(op->var, value, body);
}

}  // namespace internal
}  // namespace tessel
