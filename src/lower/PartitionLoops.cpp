// PartitionLoops: see the header. Analysis (which conditions, where they hold) is a search with
// proofs: each candidate range is confirmed by can_prove, so a failed search only means a missed
// partition, never a wrong one.
#include "tessel/lower/PartitionLoops.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include "PassUtil.h"

#include "tessel/arith/Interval.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {

using internal::split_conjuncts;
using internal::strip_likely;

/// A guard conjunct that depends on the loop variable, with the ranges of the loops and lets
/// between the loop and the guard.
struct Candidate {
    Expr cond;
    Scope inner;
};

/// Whether `e` reads a variable of `scope`.
bool uses_any(const Expr& e, const Scope& scope) {
    bool found = false;
    post_order_visit(e, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::Variable && scope.count(static_cast<const Variable*>(n)))
            found = true;
    });
    return found;
}

/// Collects the candidate conjuncts of the guards in a loop body: those using the loop variable
/// (or, with `any_inner`, any variable bound inside the loop).
class CandidateCollector : public IRVisitor {
public:
    using IRVisitor::visit;
    explicit CandidateCollector(const Var& v, bool any_inner = false)
        : var_(v), any_inner_(any_inner) {}
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
            if (uses_var(c, var_) || (any_inner_ && uses_any(c, inner_)))
                candidates.push_back({c, inner_});
    }
    Var var_;
    bool any_inner_;
    Scope inner_;
};

/// A condition on the variables outside `scope` under which `c` holds for every value of the
/// scope's variables (`a < b` holds everywhere when max(a - b) < 0), or undefined.
Expr holds_everywhere(const Expr& c, const Scope& scope) {
    auto difference = [&](const Expr& a, const Expr& b, bool upper) -> Expr {
        if (!a.type().is_int() || !a.type().is_scalar() || a.type() != b.type()) return Expr();
        Interval i = bounds_of(Sub::make(a, b), scope);
        Expr end = upper ? i.max : i.min;
        if (!end.defined() || uses_any(end, scope)) return Expr();
        return end;
    };
    Expr d;
    if (const auto* op = c.as<LT>()) {
        if ((d = difference(op->a, op->b, true)).defined()) return LT::make(d, make_zero(d.type()));
    } else if (const auto* op = c.as<LE>()) {
        if ((d = difference(op->a, op->b, true)).defined()) return LE::make(d, make_zero(d.type()));
    } else if (const auto* op = c.as<GT>()) {
        if ((d = difference(op->a, op->b, false)).defined())
            return GT::make(d, make_zero(d.type()));
    } else if (const auto* op = c.as<GE>()) {
        if ((d = difference(op->a, op->b, false)).defined())
            return GE::make(d, make_zero(d.type()));
    }
    return Expr();
}

/// can_prove with its answers kept: the same condition (the same node, or its negation) in the
/// same scope (every variable's ends the same nodes or the same constants) is proven once.
/// unswitch partitions a nest twice (the then and else branches) and asks the same questions.
class ProofCache {
public:
    bool prove(const Expr& cond, bool negated, const Scope& scope) {
        std::vector<Entry>& entries = entries_[{cond.get(), negated}];
        for (const Entry& e : entries)
            if (same_scope(e.scope, scope)) return e.result;
        bool result = can_prove(negated ? Not::make(cond) : cond, scope);
        Entry e;
        e.cond = cond;  // keeps the node (the key) alive
        e.scope = scope;
        e.result = result;
        entries.push_back(std::move(e));
        return result;
    }

private:
    struct Entry {
        Expr cond;
        Scope scope;
        bool result = false;
    };
    static bool same_end(const Expr& a, const Expr& b) {
        if (a.same_as(b)) return true;
        if (!a.defined() || !b.defined() || a.type() != b.type()) return false;
        auto x = as_const_int(a), y = as_const_int(b);
        return x && y && *x == *y;
    }
    static bool same_scope(const Scope& a, const Scope& b) {
        if (a.size() != b.size()) return false;
        for (const auto& [v, i] : b) {
            auto it = a.find(v);
            if (it == a.end() || !same_end(it->second.min, i.min) ||
                !same_end(it->second.max, i.max))
                return false;
        }
        return true;
    }
    struct KeyHash {
        size_t operator()(const std::pair<const IRNode*, bool>& k) const {
            return std::hash<const IRNode*>()(k.first) * 2 + k.second;
        }
    };
    std::unordered_map<std::pair<const IRNode*, bool>, std::vector<Entry>, KeyHash> entries_;
};

/// How much work a loop body does, and how much of it sits under guards on the loop's variable:
/// each leaf statement (store, evaluate) counts the iterations of the loops around it inside the
/// body (constant extents; a symbolic one counts once). Splitting a loop copies its whole body
/// once per part, but only the guarded leaves get faster.
class GuardedWork : public IRVisitor {
public:
    using IRVisitor::visit;
    explicit GuardedWork(const Var& v) : var_(v) {}
    double total = 0, guarded = 0;
    int64_t loops = 0;  ///< loops that stay loops in the generated code (not unrolled, vectorized)

protected:
    void visit(const For* op) override {
        if (op->kind != ForKind::Unrolled && op->kind != ForKind::Vectorized) ++loops;
        double saved = weight_;
        weight_ *= static_cast<double>(std::max<int64_t>(as_const_int(op->extent).value_or(1), 1));
        IRVisitor::visit(op);
        weight_ = saved;
    }
    void visit(const IfThenElse* op) override {
        bool saved = in_guard_;
        in_guard_ = in_guard_ || on_var(op->condition);
        IRVisitor::visit(op);
        in_guard_ = saved;
    }
    void visit(const Store* op) override { leaf(op->value, op); }
    void visit(const BufferStore* op) override { leaf(op->value, op); }
    void visit(const Evaluate* op) override { leaf(op->value, op); }

private:
    /// Whether a conjunct of `c` uses the loop variable.
    bool on_var(const Expr& c) const {
        std::vector<Expr> conjuncts;
        split_conjuncts(c, &conjuncts);
        for (const Expr& k : conjuncts)
            if (uses_var(k, var_)) return true;
        return false;
    }
    template <typename Node>
    void leaf(const Expr& value, const Node* op) {
        bool under_guard = in_guard_;
        post_order_visit(value, [&](const IRNode* n) {
            if (n->node_type != IRNodeType::Call) return;
            const auto* call = static_cast<const Call*>(n);
            if (call->op == Intrinsic::if_then_else && on_var(call->args[0])) under_guard = true;
        });
        total += weight_;
        if (under_guard) guarded += weight_;
        IRVisitor::visit(op);
    }
    Var var_;
    double weight_ = 1;
    bool in_guard_ = false;
};

/// Loops a split may copy at most (the loops in the body times the added parts).
constexpr int64_t kMaxCopiedLoops = 8;

/// Whether splitting `op` into `parts` pays for the copies of its body: at least half of the
/// body's work is under guards on the loop variable, and the split copies at most
/// kMaxCopiedLoops loops. A loop whose guards sit in a small part of its body (a padding copy
/// beside a convolution's reduction), or around a deep nest, is not split; the loops inside,
/// closer to the guarded statements, are considered on their own. Without these limits,
/// splitting every loop above a padding copy multiplied a convolution's loops (3 x 3 x 2 x ...
/// copies of the whole tile) and LLVM's build time with them, which grows faster than the code
/// (docs/perf/conv-build-time.md).
bool worth_splitting(const For* op, int parts) {
    GuardedWork work(op->loop_var);
    work.visit(op->body);
    return work.guarded * 2 >= work.total && work.loops * (parts - 1) <= kMaxCopiedLoops;
}

/// Where the conjunct `c` (a comparison of integers) holds as a bound on `v`: {true, b} for
/// v >= b, {false, b} for v < b, b free of v; nothing unless `c` is linear in `v` (a constant
/// coefficient: a convolution's window row times its dilation).
std::optional<std::pair<bool, Expr>> bound_on(const Expr& c, const Var& v) {
    Expr e;  // c as e < 0
    if (const auto* op = c.as<LT>())
        e = Sub::make(op->a, op->b);
    else if (const auto* op = c.as<LE>())
        e = Sub::make(Sub::make(op->a, op->b), make_one(op->a.type()));
    else if (const auto* op = c.as<GT>())
        e = Sub::make(op->b, op->a);
    else if (const auto* op = c.as<GE>())
        e = Sub::make(Sub::make(op->b, op->a), make_one(op->a.type()));
    if (!e.defined() || !e.type().is_int() || !e.type().is_scalar() || e.type() != v.type())
        return std::nullopt;
    Type t = v.type();
    e = simplify(e);
    Expr r = simplify(substitute(e, v, make_zero(t)));
    // e = a * v + r for a constant a, checked by simplifying e - a * v - r to zero.
    std::optional<int64_t> a = as_const_int(simplify(Sub::make(substitute(e, v, make_one(t)), r)));
    if (!a || *a == 0 ||
        !is_zero(simplify(Sub::make(Sub::make(e, Mul::make(make_const(t, *a), v)), r))))
        return std::nullopt;
    if (*a > 0)  // v < -r / a: v <= floor((-r - 1) / a)
        return std::make_pair(false,
                              simplify(floordiv(Sub::make(Sub::make(make_zero(t), r), make_one(t)),
                                                make_const(t, *a)) +
                                       1));
    // -a v > r: v >= floor(r / -a) + 1
    return std::make_pair(true, simplify(floordiv(r, make_const(t, -*a)) + 1));
}

/// Whether every leaf statement of a loop body sits under a guard with the conjunct `c` (the same
/// node).
bool all_under(const Stmt& body, const Expr& c) {
    bool all = true;
    std::function<void(const Stmt&, bool)> walk = [&](const Stmt& s, bool under) {
        if (!all || !s.defined()) return;
        if (const auto* f = s.as<For>()) return walk(f->body, under);
        if (const auto* l = s.as<LetStmt>()) return walk(l->body, under);
        if (const auto* a = s.as<Allocate>()) return walk(a->body, under);
        if (const auto* a = s.as<AttrStmt>()) return walk(a->body, under);
        if (const auto* q = s.as<Seq>()) {
            for (const Stmt& x : q->stmts) walk(x, under);
            return;
        }
        if (const auto* i = s.as<IfThenElse>()) {
            std::vector<Expr> conjuncts;
            split_conjuncts(i->condition, &conjuncts);
            bool here = under || std::any_of(conjuncts.begin(), conjuncts.end(),
                                             [&](const Expr& k) { return k.same_as(c); });
            walk(i->then_case, here);
            walk(i->else_case, under);
            return;
        }
        all = all && under;
    };
    walk(body, false);
    return all;
}

/// Decides guards under the ranges of the enclosing loops and partitions loops around them.
class LoopPartitioner : public IRMutator {
public:
    using IRMutator::visit;

protected:
    Stmt visit(const For* op) override;

    Stmt visit(const IfThenElse* op) override {
        Expr c = decide(op->condition);
        if (is_one(c)) return mutate(op->then_case);
        if (is_zero(c))
            return op->else_case.defined() ? mutate(op->else_case) : internal::make_noop_stmt();
        Stmt then_case = mutate(op->then_case);
        Stmt else_case = op->else_case.defined() ? mutate(op->else_case) : Stmt();
        if (c.same_as(op->condition) && then_case.same_as(op->then_case) &&
            else_case.same_as(op->else_case))
            return op;
        return IfThenElse::make(c, then_case, else_case);
    }

    Expr visit(const Call* op) override {
        if (op->op == Intrinsic::if_then_else && op->args[0].type().is_scalar()) {
            Expr c = decide(op->args[0]);
            if (is_one(c)) return mutate(op->args[1]);
            if (is_zero(c)) return mutate(op->args[2]);
            if (!c.same_as(op->args[0]))
                return Call::make(op->op, {c, mutate(op->args[1]), mutate(op->args[2])});
        }
        return IRMutator::visit(op);
    }

    // A skippable guard (kSkippableGuardAttr) decided here goes; one left undecided goes too,
    // its statement then running unguarded.
    Stmt visit(const AttrStmt* op) override {
        const auto* guard = op->body.as<IfThenElse>();
        if (op->key != kSkippableGuardAttr || !guard || guard->else_case.defined())
            return IRMutator::visit(op);
        if (is_zero(decide(guard->condition))) return internal::make_noop_stmt();
        return mutate(guard->then_case);
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
    /// `cond` decided in the current scope: true (1), false (0), or the conjuncts that are not
    /// proven (nor assumed by an enclosing unswitch), `cond` itself when all remain.
    Expr decide(const Expr& cond);
    /// The loop of `op` as it is partitioned (see visit(For)).
    Stmt partition(const For* op);
    /// `op` over the part of its range where the guards around its whole body can hold (bounds
    /// in the enclosing loops' variables), or undefined (see the header).
    Stmt narrow(const For* op);
    /// `if (P) op' else op`, op' without the guards that P makes true for every iteration of the
    /// loop nest, or undefined when no guard can be taken out of `op` (see the header).
    Stmt unswitch(const For* op);
    /// The loop over [lo, hi) with `op`'s variable, kind and body, the body decided there.
    Stmt make_part(const For* op, int64_t lo, int64_t hi);
    /// The main range [b, e) where the loop's guards hold, within [lo, hi). Where the range that
    /// one guard proves at the start ends where the range another proves at the end begins (two
    /// tiles of a row, the first with its left edge and the second with its right), no main range
    /// ([lo, hi)) and `*cut` that point (else lo).
    std::pair<int64_t, int64_t> main_range(const For* op, int64_t lo, int64_t hi,
                                           int64_t* cut = nullptr);
    /// True if `c` holds for v in [lo, hi] and the candidate's inner ranges.
    bool holds(const Candidate& c, const Var& v, int64_t lo, int64_t hi);

    Scope scope_;
    bool in_threads_ = false;                    ///< inside a threadIdx loop
    bool unswitched_ = false;                    ///< inside a loop nest already unswitched
    std::unordered_set<const IRNode*> assumed_;  ///< conjuncts an enclosing unswitch made true
    ProofCache proofs_;
};

Expr LoopPartitioner::decide(const Expr& cond) {
    std::vector<Expr> conjuncts;
    split_conjuncts(cond, &conjuncts);
    if (conjuncts.size() > 1) {  // one conjunct is the condition: the loop below decides it
        Expr c = strip_likely(cond);
        if (proofs_.prove(c, false, scope_)) return make_const(Bool(), 1);
        if (proofs_.prove(c, true, scope_)) return make_const(Bool(), 0);
    }
    Expr rest;
    bool dropped = false;
    for (const Expr& k : conjuncts) {
        if (assumed_.count(k.get()) || proofs_.prove(k, false, scope_)) {
            dropped = true;
            continue;
        }
        if (proofs_.prove(k, true, scope_)) return make_const(Bool(), 0);
        rest = rest.defined() ? And::make(rest, k) : k;
    }
    if (!dropped) return cond;
    return rest.defined() ? rest : make_const(Bool(), 1);
}

Stmt LoopPartitioner::unswitch(const For* op) {
    CandidateCollector collector(op->loop_var, /*any_inner=*/true);
    collector.visit(op->body);
    std::unordered_set<const IRNode*> taken;
    Expr cond;
    for (const Candidate& c : collector.candidates) {
        if (assumed_.count(c.cond.get())) continue;
        Scope inner = c.inner;
        inner[op->loop_var.get()] = Interval::from_range(Range(op->min, op->extent));
        Expr p = holds_everywhere(c.cond, inner);
        if (!p.defined()) continue;
        p = simplify(p);
        // Useless when no iteration of the enclosing loops has the whole nest inside; decided
        // inside the nest anyway when it always holds.
        if (can_prove(Not::make(p), scope_) || can_prove(p, scope_)) continue;
        taken.insert(c.cond.get());
        cond = cond.defined() ? And::make(cond, p) : p;
    }
    if (!cond.defined()) return Stmt();
    unswitched_ = true;
    Stmt otherwise = partition(op);
    for (const IRNode* k : taken) assumed_.insert(k);
    Stmt then_case = partition(op);
    for (const IRNode* k : taken) assumed_.erase(k);
    unswitched_ = false;
    return IfThenElse::make(simplify(cond), then_case, otherwise);
}

bool LoopPartitioner::holds(const Candidate& c, const Var& v, int64_t lo, int64_t hi) {
    Scope s = scope_;
    for (const auto& [var, i] : c.inner) s[var] = i;
    s[v.get()] = Interval(make_const(v.type(), lo), make_const(v.type(), hi));
    return proofs_.prove(c.cond, false, s);
}

std::pair<int64_t, int64_t> LoopPartitioner::main_range(const For* op, int64_t lo, int64_t hi,
                                                        int64_t* cut) {
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
    if (cut) *cut = found && b == e && e > lo ? e : lo;
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
    // Inside a block's threads, a loop nest without barriers whose guards cannot be split off
    // by constant ranges (thread loops, vector loops, guards on outer variables) is unswitched.
    if (in_threads_ && !unswitched_ && !internal::has_thread_sync(op->body)) {
        std::optional<int64_t> min = as_const_int(op->min), extent = as_const_int(op->extent);
        bool splits = false;
        if (min && extent && *extent > 1 &&
            (op->kind == ForKind::Serial || op->kind == ForKind::Unrolled)) {
            auto [b, e] = main_range(op, *min, *min + *extent);
            splits = b != *min || e != *min + *extent;
        }
        if (!splits) {
            Stmt u = unswitch(op);
            if (u.defined()) return u;
        }
    }
    bool threads = op->kind == ForKind::ThreadBound && op->thread_tag.rfind("threadIdx", 0) == 0;
    bool saved = in_threads_;
    in_threads_ = in_threads_ || threads;
    Stmt out = partition(op);
    in_threads_ = saved;
    return out;
}

Stmt LoopPartitioner::partition(const For* op) {
    std::optional<int64_t> min = as_const_int(op->min), extent = as_const_int(op->extent);
    // Constant bounds: every thread of a block runs the same parts, so loops with barriers split
    // too.
    bool splittable = op->kind == ForKind::Serial || op->kind == ForKind::Parallel ||
                      op->kind == ForKind::Unrolled;
    if (!min || !extent || *extent < 1) {
        scope_[op->loop_var.get()] = Interval::from_range(Range(op->min, op->extent));
        Stmt body = mutate(op->body);
        scope_.erase(op->loop_var.get());
        if (body.same_as(op->body)) return op;
        return For::make(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag);
    }
    if (op->kind == ForKind::Serial && !in_threads_ && *extent > 1)
        if (Stmt n = narrow(op); n.defined()) return n;
    int64_t lo = *min, hi = *min + *extent, cut = lo;
    auto [b, e] = splittable && *extent > 1 ? main_range(op, lo, hi, &cut) : std::make_pair(lo, hi);
    // No main range, but a head where one guard holds ending where a tail where another holds
    // begins (a row's two tiles: the first with the padding's left edge, the second with its
    // right): the two
    // parts, each partitioned on its own. Serial loops outside thread loops only: a parallel
    // loop cut so runs two parallel regions, one of them a single iteration (a blocked conv
    // 4-8 % slower).
    if (cut > lo && !in_threads_ && op->kind == ForKind::Serial && worth_splitting(op, 2)) {
        Type t = op->loop_var.type();
        std::vector<Stmt> parts;
        for (auto [plo, phi] : {std::make_pair(lo, cut), std::make_pair(cut, hi)}) {
            Stmt loop = For::make(op->loop_var, make_const(t, plo), make_const(t, phi - plo),
                                  op->kind, op->body, op->thread_tag);
            Stmt part = partition(loop.as<For>());
            if (!internal::is_noop_stmt(part)) parts.push_back(part);
        }
        return parts.empty() ? internal::make_noop_stmt() : Seq::make(parts);
    }
    if ((b != lo || e != hi) && !worth_splitting(op, 1 + (b > lo) + (e < hi))) {
        b = lo;
        e = hi;
    }
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

Stmt LoopPartitioner::narrow(const For* op) {
    const int64_t lo = *as_const_int(op->min), hi = lo + *as_const_int(op->extent);
    CandidateCollector collector(op->loop_var);
    collector.visit(op->body);
    Type t = op->loop_var.type();
    Expr first = make_const(t, lo), end = make_const(t, hi);
    std::vector<const IRNode*> taken;
    for (const Candidate& c : collector.candidates) {
        if (assumed_.count(c.cond.get()) || uses_any(c.cond, c.inner) ||
            holds(c, op->loop_var, lo, hi - 1) || !all_under(op->body, c.cond))
            continue;
        auto bound = bound_on(c.cond, op->loop_var);
        if (!bound) continue;
        // A bound the enclosing loops fix (a part of a split loop) is a constant.
        Expr b = bound->second;
        Interval i = bounds_of(b, scope_);
        if (i.min.defined() && i.max.defined() && as_const_int(i.min) && as_const_int(i.max) &&
            *as_const_int(i.min) == *as_const_int(i.max))
            b = i.min;
        if (bound->first)
            first = Max::make(first, b);
        else
            end = Min::make(end, b);
        taken.push_back(c.cond.get());
    }
    if (taken.empty()) return Stmt();
    first = simplify(first);
    end = simplify(end);
    Expr extent = simplify(Max::make(Sub::make(end, first), make_zero(t)));
    if (as_const_int(first) && as_const_int(extent)) {  // constant: partition it as any other
        if (*as_const_int(extent) == 0) return internal::make_noop_stmt();
        Stmt part = For::make(op->loop_var, first, extent, op->kind, op->body, op->thread_tag);
        return partition(part.as<For>());
    }
    for (const IRNode* k : taken) assumed_.insert(k);
    scope_[op->loop_var.get()] = Interval(make_const(t, lo), make_const(t, hi - 1));
    Stmt body = mutate(op->body);
    scope_.erase(op->loop_var.get());
    for (const IRNode* k : taken) assumed_.erase(k);
    if (internal::is_noop_stmt(body)) return body;
    return For::make(op->loop_var, first, extent, op->kind, body, op->thread_tag);
}

}  // namespace

Stmt partition_loops(const Stmt& s) {
    return LoopPartitioner().mutate(s);
}

}  // namespace tessel
