// PartitionLoops: see the header. Analysis (which conditions, where they hold) is a search with
// proofs: each candidate range is confirmed by can_prove, so a failed search only means a missed
// partition, never a wrong one.
#include "tessel/lower/PartitionLoops.h"

#include "PassUtil.h"
#include "tessel/arith/Interval.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {

/// `c` without `likely` hints at the top.
Expr strip_likely(const Expr& c) {
    const auto* call = c.as<Call>();
    if (call && call->op == Intrinsic::likely) return strip_likely(call->args[0]);
    return c;
}

/// The conjuncts of `c` (likely hints stripped).
void split_conjuncts(const Expr& c, std::vector<Expr>* out) {
    Expr e = strip_likely(c);
    if (const auto* a = e.as<And>()) {
        split_conjuncts(a->a, out);
        split_conjuncts(a->b, out);
    } else {
        out->push_back(e);
    }
}

/// A guard conjunct that depends on the loop variable, with the ranges of the loops and lets
/// between the loop and the guard.
struct Candidate {
    Expr cond;
    Scope inner;
};

/// Collects the candidate conjuncts of the guards in a loop body.
class CandidateCollector : public IRVisitor {
public:
    using IRVisitor::visit;
    explicit CandidateCollector(const Var& v) : var_(v) {}
    std::vector<Candidate> candidates;

protected:
    void visit(const For* op) override {
        inner_[op->loop_var.get()] = Interval::from_range(Range(op->min, op->extent));
        IRVisitor::visit(op);
        inner_.erase(op->loop_var.get());
    }
    void visit(const LetStmt* op) override {
        inner_[op->var.get()] = Interval::single_point(op->value);
        IRVisitor::visit(op);
        inner_.erase(op->var.get());
    }
    void visit(const IfThenElse* op) override {
        add(op->condition);
        IRVisitor::visit(op);
    }
    void visit(const Call* op) override {
        if (op->op == Intrinsic::if_then_else && op->args[0].type().is_scalar()) add(op->args[0]);
        IRVisitor::visit(op);
    }

private:
    void add(const Expr& cond) {
        std::vector<Expr> conjuncts;
        split_conjuncts(cond, &conjuncts);
        for (const Expr& c : conjuncts)
            if (uses_var(c, var_)) candidates.push_back({c, inner_});
    }
    Var var_;
    Scope inner_;
};

/// Decides guards under the ranges of the enclosing loops and partitions loops around them.
class LoopPartitioner : public IRMutator {
public:
    using IRMutator::visit;

protected:
    Stmt visit(const For* op) override;

    Stmt visit(const IfThenElse* op) override {
        Expr c = strip_likely(op->condition);
        if (can_prove(c, scope_)) return mutate(op->then_case);
        if (can_prove(Not::make(c), scope_))
            return op->else_case.defined() ? mutate(op->else_case) : internal::make_noop_stmt();
        return IRMutator::visit(op);
    }

    Expr visit(const Call* op) override {
        if (op->op == Intrinsic::if_then_else && op->args[0].type().is_scalar()) {
            Expr c = strip_likely(op->args[0]);
            if (can_prove(c, scope_)) return mutate(op->args[1]);
            if (can_prove(Not::make(c), scope_)) return mutate(op->args[2]);
        }
        return IRMutator::visit(op);
    }

    Stmt visit(const LetStmt* op) override {
        Expr value = mutate(op->value);
        scope_[op->var.get()] = bounds_of(value, scope_);
        Stmt body = mutate(op->body);
        scope_.erase(op->var.get());
        if (value.same_as(op->value) && body.same_as(op->body)) return op;
        return LetStmt::make(op->var, value, body);
    }

private:
    /// The loop over [lo, hi) with `op`'s variable, kind and body, the body decided there.
    Stmt make_part(const For* op, int64_t lo, int64_t hi);
    /// The main range [b, e) where the loop's guards hold, within [lo, hi).
    std::pair<int64_t, int64_t> main_range(const For* op, int64_t lo, int64_t hi);
    /// True if `c` holds for v in [lo, hi] and the candidate's inner ranges.
    bool holds(const Candidate& c, const Var& v, int64_t lo, int64_t hi);

    Scope scope_;
};

bool LoopPartitioner::holds(const Candidate& c, const Var& v, int64_t lo, int64_t hi) {
    Scope s = scope_;
    for (const auto& [var, i] : c.inner) s[var] = i;
    s[v.get()] = Interval(make_const(v.type(), lo), make_const(v.type(), hi));
    return can_prove(c.cond, s);
}

std::pair<int64_t, int64_t> LoopPartitioner::main_range(const For* op, int64_t lo, int64_t hi) {
    CandidateCollector collector(op->loop_var);
    collector.visit(op->body);
    int64_t b = lo, e = hi;
    bool found = false;
    for (const Candidate& c : collector.candidates) {
        const Var& v = op->loop_var;
        if (holds(c, v, lo, lo)) {
            // True at the start: search the last point up to which it holds (binary search; the
            // final range is itself proven).
            int64_t good = lo, bad = hi;            // holds on [lo, good]; not proven on [lo, bad]
            if (holds(c, v, lo, hi - 1)) continue;  // true everywhere: no cut needed
            while (bad - good > 1) {
                int64_t mid = good + (bad - good) / 2;
                (holds(c, v, lo, mid) ? good : bad) = mid;
            }
            e = std::min(e, good + 1);
            found = true;
        } else if (holds(c, v, hi - 1, hi - 1)) {
            int64_t good = hi - 1, bad = lo;  // holds on [good, hi - 1]; not proven from bad
            while (good - bad > 1) {
                int64_t mid = bad + (good - bad) / 2;
                (holds(c, v, mid, hi - 1) ? good : bad) = mid;
            }
            b = std::max(b, good);
            found = true;
        }
    }
    if (!found || b >= e) return {lo, hi};
    return {b, e};
}

Stmt LoopPartitioner::make_part(const For* op, int64_t lo, int64_t hi) {
    Type t = op->loop_var.type();
    scope_[op->loop_var.get()] = Interval(make_const(t, lo), make_const(t, hi - 1));
    Stmt body = mutate(op->body);
    scope_.erase(op->loop_var.get());
    if (internal::is_noop_stmt(body)) return body;
    return For::make(op->loop_var, make_const(t, lo), make_const(t, hi - lo), op->kind, body,
                     op->thread_tag);
}

Stmt LoopPartitioner::visit(const For* op) {
    std::optional<int64_t> min = as_const_int(op->min), extent = as_const_int(op->extent);
    // A loop with barriers stays whole: its parts' bounds could differ between threads.
    bool splittable = (op->kind == ForKind::Serial || op->kind == ForKind::Parallel ||
                       op->kind == ForKind::Unrolled) &&
                      !internal::has_thread_sync(op->body);
    if (!min || !extent || *extent < 1) {
        scope_[op->loop_var.get()] = Interval::from_range(Range(op->min, op->extent));
        Stmt body = mutate(op->body);
        scope_.erase(op->loop_var.get());
        if (body.same_as(op->body)) return op;
        return For::make(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag);
    }
    int64_t lo = *min, hi = *min + *extent;
    auto [b, e] = splittable && *extent > 1 ? main_range(op, lo, hi) : std::make_pair(lo, hi);
    std::vector<Stmt> parts;
    for (auto [plo, phi] : {std::make_pair(lo, b), std::make_pair(b, e), std::make_pair(e, hi)}) {
        if (phi <= plo) continue;
        Stmt part = make_part(op, plo, phi);
        if (!internal::is_noop_stmt(part)) parts.push_back(part);
    }
    if (parts.empty()) return internal::make_noop_stmt();
    Stmt out = Seq::make(parts);
    // Keep the node when nothing changed (same range, same body).
    const auto* f = out.as<For>();
    if (f && f->body.same_as(op->body) && b == lo && e == hi) return op;
    return out;
}

}  // namespace

Stmt partition_loops(const Stmt& s) {
    return LoopPartitioner().mutate(s);
}

}  // namespace tessel
