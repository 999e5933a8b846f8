// VectorizeLoops: see the header. The widening mutator throws CannotVectorize where it cannot
// keep the semantics; the pass then keeps the loop as a serial loop (always correct).
#include "tessel/lower/VectorizeLoops.h"

#include <optional>
#include <unordered_set>

#include "PassUtil.h"
#include "tessel/arith/Interval.h"
#include "tessel/arith/Modular.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/StorageFlatten.h"

namespace tessel {

using internal::fold_add;
using internal::fold_mul;
using internal::fold_sub;

namespace {

/// Whether `e` is a multiple of `lanes` (modular analysis).
bool multiple_of(const Expr& e, int64_t lanes) {
    ModularSet m = modular_set_of(e);
    return m.coeff % lanes == 0 && m.base % lanes == 0;
}

/// The scalar condition of lane 0 when the vector condition `c` is the same in every lane, or
/// undefined: `ramp(b, 1, L) < broadcast(n)` with b and n multiples of L holds in every lane or
/// in none (the edge of a padded tile or a row falls between vectors), so the access it guards
/// stays one dense vector instead of L predicated lanes. Conjunctions of such conditions too.
Expr uniform_condition(const Expr& c) {
    if (const auto* a = c.as<And>()) {
        Expr x = uniform_condition(a->a), y = uniform_condition(a->b);
        return x.defined() && y.defined() ? And::make(x, y) : Expr();
    }
    // ramp < n, ramp >= n: uniform when n is a multiple of L; ramp <= n, ramp > n: when n + 1 is.
    auto compare = [](const Expr& x, const Expr& y, bool strict, auto make) -> Expr {
        const auto* r = x.as<Ramp>();
        const auto* b = y.as<Broadcast>();
        if (!r || !b || !is_one(r->stride) || !r->base.type().is_int()) return Expr();
        int64_t lanes = r->lanes;
        Expr edge = strict ? b->value : Add::make(b->value, make_const(b->value.type(), 1));
        if (!multiple_of(r->base, lanes) || !multiple_of(edge, lanes)) return Expr();
        return make(r->base, b->value);
    };
    if (const auto* op = c.as<LT>()) {
        Expr u = compare(op->a, op->b, true, [](Expr x, Expr y) { return LT::make(x, y); });
        if (!u.defined())
            u = compare(op->b, op->a, false, [](Expr x, Expr y) { return GT::make(x, y); });
        return u;
    }
    if (const auto* op = c.as<LE>()) {
        Expr u = compare(op->a, op->b, false, [](Expr x, Expr y) { return LE::make(x, y); });
        if (!u.defined())
            u = compare(op->b, op->a, true, [](Expr x, Expr y) { return GE::make(x, y); });
        return u;
    }
    if (const auto* op = c.as<GE>()) {
        Expr u = compare(op->a, op->b, true, [](Expr x, Expr y) { return GE::make(x, y); });
        if (!u.defined())
            u = compare(op->b, op->a, false, [](Expr x, Expr y) { return LE::make(x, y); });
        return u;
    }
    if (const auto* op = c.as<GT>()) {
        Expr u = compare(op->a, op->b, false, [](Expr x, Expr y) { return GT::make(x, y); });
        if (!u.defined())
            u = compare(op->b, op->a, true, [](Expr x, Expr y) { return LT::make(x, y); });
        return u;
    }
    return Expr();
}

/// Thrown inside the widener when a body cannot be vectorized correctly.
struct CannotVectorize {};

/// What the vectorizer knows around a vectorized loop: the buffers allocated inside the function
/// with their constant sizes (elements), and the intervals of the enclosing loops' variables.
struct VectorContext {
    std::unordered_map<const Variable*, int64_t> allocated;
    Scope loops;
};

/// The variables `e` mentions, buffers included.
std::unordered_set<const Variable*> variables_of(const Expr& e) {
    std::unordered_set<const Variable*> out;
    post_order_visit(e, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::Variable) out.insert(static_cast<const Variable*>(n));
        if (n->node_type == IRNodeType::Load)
            out.insert(static_cast<const Load*>(n)->buffer_var.get());
    });
    return out;
}

/// `c` without `likely` hints at the top.
Expr strip_likely(const Expr& c) {
    const auto* call = c.as<Call>();
    if (call && call->op == Intrinsic::likely) return strip_likely(call->args[0]);
    return c;
}

/// The lanes of a vectorized loop `for v in [min, min + n)` that can do anything: its body is a
/// chain of `if`s without `else` (a tail's guards), and a conjunct `v + x < e` or `v + x <= e`
/// of one of them (x and e free of v) bounds v - min below a constant c < n: the loop after the
/// first c lanes does nothing. Returns c rounded up to a power of two (a whole vector: the guard
/// stays, on the narrower vector), or n. A GEMM's tail panel of 13 or 1 columns in a tile of 32
/// computes 16 or 1 lanes, not 32.
int64_t live_lanes(const For* op, int64_t n, const Scope& loops) {
    const Variable* v = op->loop_var.get();
    auto free_of_v = [&](const Expr& e) { return !variables_of(e).count(v); };
    // v - min < bound for `a < b` (strict) or `a <= b`, when a is v or v + x.
    auto count = [&](const Expr& a, const Expr& b, bool strict) -> std::optional<int64_t> {
        Expr x;
        if (a.as<Variable>() == v) {
            x = make_zero(a.type());
        } else if (const auto* add = a.as<Add>()) {
            if (add->a.as<Variable>() == v && free_of_v(add->b)) x = add->b;
            if (add->b.as<Variable>() == v && free_of_v(add->a)) x = add->a;
        }
        if (!x.defined() || !free_of_v(b)) return std::nullopt;
        Expr lanes = fold_sub(fold_sub(b, x), op->min);
        if (!strict) lanes = fold_add(lanes, make_const(lanes.type(), 1));
        return const_bounds_of(lanes, loops).max;
    };
    int64_t live = n;
    Stmt body = op->body;
    while (const auto* guard = body.as<IfThenElse>()) {
        if (guard->else_case.defined()) break;
        std::vector<Expr> conjuncts{strip_likely(guard->condition)};
        for (size_t i = 0; i < conjuncts.size(); ++i) {
            if (const auto* a = conjuncts[i].as<And>()) {
                conjuncts.push_back(strip_likely(a->a));
                conjuncts.push_back(strip_likely(a->b));
            }
            std::optional<int64_t> c;
            if (const auto* lt = conjuncts[i].as<LT>()) c = count(lt->a, lt->b, true);
            if (const auto* le = conjuncts[i].as<LE>()) c = count(le->a, le->b, false);
            if (c) live = std::min(live, std::max<int64_t>(*c, 1));
        }
        body = guard->then_case;
    }
    int64_t lanes = 1;
    while (lanes < live) lanes *= 2;
    return std::min(lanes, n);
}

/// `e` with `lanes` lanes: scalars are broadcast, vectors of that width kept, others refused.
Expr widen(const Expr& e, int lanes) {
    if (e.type().lanes == lanes) return e;
    if (e.type().is_scalar()) return Broadcast::make(e, lanes);
    throw CannotVectorize();
}

/// The scalar behind a loop-invariant operand (a scalar, or a Broadcast of one), or undefined.
Expr invariant_scalar(const Expr& e) {
    if (e.type().is_scalar()) return e;
    if (const auto* b = e.as<Broadcast>()) return b->value;
    return Expr();
}

/// Keeps Ramp arithmetic affine: ramp ± invariant, ramp ± ramp, ramp * invariant.
Expr ramp_arith(IRNodeType op, const Expr& a, const Expr& b) {
    const auto *ra = a.as<Ramp>(), *rb = b.as<Ramp>();
    Expr sa = invariant_scalar(a), sb = invariant_scalar(b);
    switch (op) {
        case IRNodeType::Add:
            if (ra && rb)
                return Ramp::make(fold_add(ra->base, rb->base), fold_add(ra->stride, rb->stride),
                                  ra->lanes);
            if (ra && sb.defined())
                return Ramp::make(fold_add(ra->base, sb), ra->stride, ra->lanes);
            if (rb && sa.defined())
                return Ramp::make(fold_add(sa, rb->base), rb->stride, rb->lanes);
            break;
        case IRNodeType::Sub:
            if (ra && rb)
                return Ramp::make(fold_sub(ra->base, rb->base), fold_sub(ra->stride, rb->stride),
                                  ra->lanes);
            if (ra && sb.defined())
                return Ramp::make(fold_sub(ra->base, sb), ra->stride, ra->lanes);
            if (rb && sa.defined()) {
                return Ramp::make(fold_sub(sa, rb->base),
                                  fold_sub(make_zero(sa.type()), rb->stride), rb->lanes);
            }
            break;
        case IRNodeType::Mul:
            if (ra && sb.defined())
                return Ramp::make(fold_mul(ra->base, sb), fold_mul(ra->stride, sb), ra->lanes);
            if (rb && sa.defined())
                return Ramp::make(fold_mul(sa, rb->base), fold_mul(sa, rb->stride), rb->lanes);
            break;
        default: break;
    }
    return Expr();
}

/// True if `s` calls an impure intrinsic (a barrier) anywhere.
bool has_impure_call(const Stmt& s) {
    bool found = false;
    post_order_visit(s, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::Call)
            found = found || !intrinsic_is_pure(static_cast<const Call*>(n)->op);
    });
    return found;
}

/// The buffer variables `e` loads from.
std::unordered_set<const Variable*> loaded_buffers(const Expr& e) {
    std::unordered_set<const Variable*> out;
    post_order_visit(e, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::Load)
            out.insert(static_cast<const Load*>(n)->buffer_var.get());
        if (n->node_type == IRNodeType::BufferLoad)
            out.insert(static_cast<const BufferLoad*>(n)->buffer->data.get());
    });
    return out;
}

/// True if `s` stores to any of `buffers`.
bool stores_to_any(const Stmt& s, const std::unordered_set<const Variable*>& buffers) {
    bool found = false;
    post_order_visit(s, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::Store)
            found = found || buffers.count(static_cast<const Store*>(n)->buffer_var.get());
        if (n->node_type == IRNodeType::BufferStore)
            found = found || buffers.count(static_cast<const BufferStore*>(n)->buffer->data.get());
    });
    return found;
}

/// Rebinds Let/LetStmt variables whose values changed type to fresh variables of the new type.
class Rebinder : public IRMutator {
public:
    using IRMutator::visit;

protected:
    Expr visit(const Variable* op) override {
        auto it = rebound_.find(op);
        return it == rebound_.end() ? Expr(op) : it->second;
    }
    Expr visit(const Let* op) override {
        Expr value = mutate(op->value);
        Var var = rebind(op->var, value);
        Expr body = mutate(op->body);
        if (var.same_as(op->var) && value.same_as(op->value) && body.same_as(op->body)) return op;
        return Let::make(var, value, body);
    }
    Stmt visit(const LetStmt* op) override {
        Expr value = mutate(op->value);
        Var var = rebind(op->var, value);
        Stmt body = mutate(op->body);
        if (var.same_as(op->var) && value.same_as(op->value) && body.same_as(op->body)) return op;
        return LetStmt::make(var, value, body);
    }

private:
    Var rebind(const Var& var, const Expr& value) {
        if (value.type() == var.type()) return var;
        Var fresh(var.name(), value.type());
        rebound_[var.get()] = fresh;
        return fresh;
    }
    VarMap rebound_;
};

/// Adds `mask` (bool, `lanes` lanes) to every store and load of a widened branch.
///
/// Under a split's tail guard (`likely`, with the vectorizer's context) two kinds of access keep
/// no mask, so that the guarded tail of a register tile stays plain vector code that LLVM keeps in
/// registers:
///  - a load whose address is the same in every lane and mentions nothing the guard does (a
///    matrix element broadcast along the guarded columns): the guard bounds the iteration domain,
///    and the same address is read at a point inside it;
///  - a load from, or a store of a whole aligned vector to, a buffer allocated in the function,
///    provably inside the allocation: the lanes past the guard are padded points of the buffer's
///    region (a tile's storage covers the whole tile, each point its own element), which no
///    valid point reads. Stores to the function's arguments and loads from them stay masked.
class Predicator : public Rebinder {
public:
    using Rebinder::visit;
    explicit Predicator(Expr mask, const VectorContext* guard = nullptr)
        : mask_(std::move(mask)), lanes_(mask_.type().lanes), guard_(guard) {
        if (guard_) mask_vars_ = variables_of(mask_);
    }

protected:
    // A scalar load under a mask becomes a masked gather of one address (a lane that is off
    // must not read: the whole vector may be off), so operands may change from scalar to vector;
    // the nodes above them widen their other operands to match.
    template <typename T>
    Expr match_lanes(const T* op) {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (a.same_as(op->a) && b.same_as(op->b)) return op;
        if (a.type().lanes != b.type().lanes) a = widen(a, lanes_), b = widen(b, lanes_);
        return T::make(a, b);
    }
#define TESSEL_MATCH_LANES(T)          \
    Expr visit(const T* op) override { \
        return match_lanes(op);        \
    }
    TESSEL_MATCH_LANES(Add)
    TESSEL_MATCH_LANES(Sub)
    TESSEL_MATCH_LANES(Mul)
    TESSEL_MATCH_LANES(Div)
    TESSEL_MATCH_LANES(Mod)
    TESSEL_MATCH_LANES(FloorDiv)
    TESSEL_MATCH_LANES(FloorMod)
    TESSEL_MATCH_LANES(Min)
    TESSEL_MATCH_LANES(Max)
    TESSEL_MATCH_LANES(EQ)
    TESSEL_MATCH_LANES(NE)
    TESSEL_MATCH_LANES(LT)
    TESSEL_MATCH_LANES(LE)
    TESSEL_MATCH_LANES(GT)
    TESSEL_MATCH_LANES(GE)
    TESSEL_MATCH_LANES(And)
    TESSEL_MATCH_LANES(Or)
#undef TESSEL_MATCH_LANES
    Expr visit(const Broadcast* op) override {
        Expr v = mutate(op->value);
        if (v.same_as(op->value)) return op;
        return v.type().is_vector() ? widen(v, op->lanes) : Broadcast::make(v, op->lanes);
    }
    Expr visit(const Select* op) override {
        Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
        if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
            return op;
        if (t.type().lanes != f.type().lanes ||
            (c.type().is_vector() && c.type().lanes != t.type().lanes))
            t = widen(t, lanes_), f = widen(f, lanes_);
        if (c.type().is_vector() || t.type().is_vector())
            c = c.type().is_vector() ? c : widen(c, lanes_);
        return Select::make(c, t, f);
    }
    Expr visit(const Cast* op) override {
        Expr v = mutate(op->value);
        if (v.same_as(op->value)) return op;
        return Cast::make(op->type.with_lanes(v.type().lanes), v);
    }
    Expr visit(const Call* op) override {
        std::vector<Expr> args;
        if (!mutate_all(op->args, &args)) return op;
        bool vector = false;
        for (const Expr& a : args) vector = vector || a.type().is_vector();
        if (vector)
            for (Expr& a : args) a = widen(a, lanes_);
        return Call::make(op->op, args);
    }
    Expr visit(const Load* op) override {
        Expr index = mutate(op->index);
        if (guard_ && !op->predicate.defined() && unmasked_load(op->buffer_var.get(), index))
            return Load::make(op->type.with_lanes(index.type().lanes), op->buffer_var, index,
                              Expr());
        index = widen(index, lanes_);
        Expr pred = op->predicate.defined() ? And::make(widen(mutate(op->predicate), lanes_), mask_)
                                            : mask_;
        return Load::make(op->type.with_lanes(lanes_), op->buffer_var, index, pred);
    }
    Stmt visit(const Store* op) override {
        Expr value = mutate(op->value), index = mutate(op->index);
        if (index.type().lanes != lanes_) throw CannotVectorize();
        if (guard_ && !op->predicate.defined() && padded_vector(op->buffer_var.get(), index))
            return Store::make(op->buffer_var, widen(value, lanes_), index, Expr());
        Expr pred = op->predicate.defined() ? And::make(mutate(op->predicate), mask_) : mask_;
        return Store::make(op->buffer_var, widen(value, lanes_), index, pred);
    }

    // The constant size of `buffer` when the function allocates it, else 0.
    int64_t allocated_size(const Variable* buffer) const {
        auto it = guard_->allocated.find(buffer);
        return it == guard_->allocated.end() ? 0 : it->second;
    }
    // Whether every value of `e` lies in [lo, hi] over the enclosing loops.
    bool within(const Expr& e, int64_t lo, int64_t hi) const {
        ConstInterval b = const_bounds_of(e, guard_->loops);
        return b.min && b.max && *b.min >= lo && *b.max <= hi;
    }
    bool unmasked_load(const Variable* buffer, const Expr& index) const {
        if (index.type().is_scalar()) {
            bool disjoint = true;
            for (const Variable* v : variables_of(index))
                disjoint = disjoint && !mask_vars_.count(v);
            if (disjoint) return true;
        }
        // Inside the allocation: a scalar index, or a dense vector from its first lane on.
        int64_t size = allocated_size(buffer);
        if (size <= 0) return false;
        if (index.type().is_scalar()) return within(index, 0, size - 1);
        const auto* r = index.as<Ramp>();
        return r && is_one(r->stride) && within(r->base, 0, size - r->lanes);
    }
    // A dense vector of the mask's width at an aligned offset inside an allocated buffer whose
    // size is a multiple of the width: the lanes are one aligned block of its storage.
    bool padded_vector(const Variable* buffer, const Expr& index) const {
        const auto* r = index.as<Ramp>();
        int64_t size = allocated_size(buffer);
        return r && is_one(r->stride) && r->lanes == lanes_ && size > 0 && size % lanes_ == 0 &&
               multiple_of(r->base, lanes_) && within(r->base, 0, size - lanes_);
    }
    Stmt visit(const Evaluate* op) override {
        if (!internal::is_noop_stmt(op)) throw CannotVectorize();
        return op;
    }
#define TESSEL_REFUSE(T)            \
    Stmt visit(const T*) override { \
        throw CannotVectorize();    \
    }
    TESSEL_REFUSE(For)
    TESSEL_REFUSE(IfThenElse)
    TESSEL_REFUSE(Allocate)
    TESSEL_REFUSE(AssertStmt)
    TESSEL_REFUSE(AttrStmt)
    TESSEL_REFUSE(BufferStore)
#undef TESSEL_REFUSE
    Expr visit(const BufferLoad*) override {
        throw CannotVectorize();
    }

private:
    Expr mask_;
    int lanes_;
    const VectorContext* guard_;
    std::unordered_set<const Variable*> mask_vars_;
};

/// Widens the body of one vectorized loop: the loop variable becomes `ramp(min, 1, lanes)`.
class Widener : public Rebinder {
public:
    using Rebinder::visit;
    /// Mutates `op` as the base mutator does; refuses when that changes it (it mentions the
    /// loop variable where no vector may go).
    template <typename T>
    auto refuse_if_changed(const T* op) -> decltype(IRMutator::visit(op)) {
        auto out = IRMutator::visit(op);
        if (!out.same_as(op)) throw CannotVectorize();
        return out;
    }

    Widener(const Var& var, const Expr& min, int lanes, const VectorContext& context)
        : var_(var), lanes_(lanes), context_(context) {
        ramp_ = Ramp::make(min, make_one(min.type()), lanes);
    }

protected:
    Expr visit(const Variable* op) override {
        if (op == var_.get()) return ramp_;
        return Rebinder::visit(op);
    }

    template <typename T>
    Expr widen_binary(const T* op) {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (a.same_as(op->a) && b.same_as(op->b)) return op;
        if (a.type().is_scalar() && b.type().is_scalar()) return T::make(a, b);
        if (Expr r = ramp_arith(T::kNodeType, a, b); r.defined()) return r;
        const auto *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
        if (ba && bb) return Broadcast::make(T::make(ba->value, bb->value), lanes_);
        return T::make(widen(a, lanes_), widen(b, lanes_));
    }

#define TESSEL_WIDEN_BINARY(T)         \
    Expr visit(const T* op) override { \
        return widen_binary(op);       \
    }
    TESSEL_WIDEN_BINARY(Add)
    TESSEL_WIDEN_BINARY(Sub)
    TESSEL_WIDEN_BINARY(Mul)
    TESSEL_WIDEN_BINARY(Div)
    TESSEL_WIDEN_BINARY(Mod)
    TESSEL_WIDEN_BINARY(FloorDiv)
    TESSEL_WIDEN_BINARY(FloorMod)
    TESSEL_WIDEN_BINARY(Min)
    TESSEL_WIDEN_BINARY(Max)
    TESSEL_WIDEN_BINARY(EQ)
    TESSEL_WIDEN_BINARY(NE)
    TESSEL_WIDEN_BINARY(LT)
    TESSEL_WIDEN_BINARY(LE)
    TESSEL_WIDEN_BINARY(GT)
    TESSEL_WIDEN_BINARY(GE)
    TESSEL_WIDEN_BINARY(And)
    TESSEL_WIDEN_BINARY(Or)
#undef TESSEL_WIDEN_BINARY

    Expr visit(const Cast* op) override {
        Expr v = mutate(op->value);
        if (v.same_as(op->value)) return op;
        return Cast::make(op->type.with_lanes(v.type().lanes), v);
    }
    Expr visit(const Select* op) override {
        Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
        if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
            return op;
        if (t.type().is_scalar() && f.type().is_scalar() && c.type().is_scalar())
            return Select::make(c, t, f);
        if (!c.type().is_scalar()) c = widen(c, lanes_);
        return Select::make(c, widen(t, lanes_), widen(f, lanes_));
    }
    // A vector inside an existing vector node would need nested vectorization: refuse.
    Expr visit(const Ramp* op) override {
        Expr base = mutate(op->base), stride = mutate(op->stride);
        if (base.type().is_vector() || stride.type().is_vector()) throw CannotVectorize();
        if (base.same_as(op->base) && stride.same_as(op->stride)) return op;
        return Ramp::make(base, stride, op->lanes);
    }
    Expr visit(const Broadcast* op) override {
        Expr value = mutate(op->value);
        if (value.type().is_vector()) throw CannotVectorize();
        if (value.same_as(op->value)) return op;
        return Broadcast::make(value, op->lanes);
    }
    Expr visit(const Call* op) override {
        std::vector<Expr> args;
        if (!mutate_all(op->args, &args)) return op;
        bool vector = false;
        for (const Expr& a : args) vector = vector || a.type().is_vector();
        if (!vector) return Call::make(op->op, args);
        if (op->op == Intrinsic::swizzle)  // the constants stay scalar; a Ramp may stay dense
            return swizzle_index(
                args[0], {*as_const_int(args[1]), *as_const_int(args[2]), *as_const_int(args[3])});
        for (size_t k = 0; k < args.size(); ++k) {
            bool scalar_condition = op->op == Intrinsic::if_then_else && k == 0;
            if (!(scalar_condition && args[k].type().is_scalar())) args[k] = widen(args[k], lanes_);
        }
        // if_then_else evaluates only the taken branch (ir/IR.h); with a vector condition codegen
        // selects between both, so each branch's loads read only the lanes that take it. A
        // condition the same in every lane stays scalar: the branches stay dense vectors.
        if (op->op == Intrinsic::if_then_else && args[0].type().is_vector()) {
            Expr u = uniform_condition(args[0]);
            if (u.defined()) return Call::make(op->op, {u, args[1], args[2]});
            args[1] = Predicator(args[0]).mutate(args[1]);
            args[2] = Predicator(Not::make(args[0])).mutate(args[2]);
        }
        return Call::make(op->op, args);
    }
    Expr visit(const TensorRead* op) override {
        return refuse_if_changed(op);
    }
    Expr visit(const Reduce* op) override {
        return refuse_if_changed(op);
    }

    Expr visit(const Load* op) override {
        Expr index = mutate(op->index), pred = mutate(op->predicate);
        if (index.same_as(op->index) && pred.same_as(op->predicate)) return op;
        int lanes = std::max<int>(index.type().lanes, pred.defined() ? pred.type().lanes : 1);
        if (lanes == 1) return Load::make(op->type, op->buffer_var, index, pred);
        if (pred.defined()) pred = widen(pred, lanes_);
        return Load::make(op->type.with_lanes(lanes_), op->buffer_var, widen(index, lanes_), pred);
    }
    Expr visit(const BufferLoad* op) override {
        std::vector<Expr> indices;
        if (!mutate_all(op->indices, &indices)) return op;
        for (const Expr& i : indices)
            if (i.type().is_vector() && i.type().lanes != lanes_) throw CannotVectorize();
        return BufferLoad::make(op->buffer, indices);
    }

    Stmt visit(const Store* op) override {
        Expr value = mutate(op->value), index = mutate(op->index), pred = mutate(op->predicate);
        // Every lane would write one location: a loop-carried reduction, not vectorizable.
        if (index.type().is_scalar() || index.as<Broadcast>()) throw CannotVectorize();
        if (pred.defined()) pred = widen(pred, lanes_);
        return Store::make(op->buffer_var, widen(value, lanes_), widen(index, lanes_), pred);
    }
    Stmt visit(const BufferStore* op) override {
        Expr value = mutate(op->value);
        std::vector<Expr> indices;
        mutate_all(op->indices, &indices);
        bool varying = false;
        for (const Expr& i : indices) {
            if (i.type().is_vector() && i.type().lanes != lanes_) throw CannotVectorize();
            varying = varying || (i.type().is_vector() && !i.as<Broadcast>());
        }
        if (!varying) throw CannotVectorize();
        return BufferStore::make(op->buffer, widen(value, lanes_), indices);
    }
    Stmt visit(const For* op) override {
        Expr min = mutate(op->min), extent = mutate(op->extent);
        if (min.type().is_vector() || extent.type().is_vector()) throw CannotVectorize();
        Stmt body = mutate(op->body);
        if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return op;
        return For::make(op->loop_var, min, extent, op->kind, body, op->thread_tag);
    }
    Stmt visit(const IfThenElse* op) override {
        // A condition reading what the loop writes would see other lanes' stores out of order.
        std::unordered_set<const Variable*> read = loaded_buffers(op->condition);
        if (stores_to_any(op->then_case, read) || stores_to_any(op->else_case, read))
            throw CannotVectorize();
        Expr cond = mutate(op->condition);
        Stmt then_case = mutate(op->then_case), else_case = mutate(op->else_case);
        if (cond.type().is_scalar()) {
            if (cond.same_as(op->condition) && then_case.same_as(op->then_case) &&
                else_case.same_as(op->else_case))
                return op;
            return IfThenElse::make(cond, then_case, else_case);
        }
        // A varying condition: both branches run with their stores and loads masked.
        const VectorContext* guard = nullptr;  // a split's tail guard (Predicator)
        if (const auto* hint = cond.as<Call>(); hint && hint->op == Intrinsic::likely) {
            cond = hint->args[0];  // a mask is no branch: the hint has nothing left to say
            if (!else_case.defined()) guard = &context_;
        }
        Stmt out = Predicator(cond, guard).mutate(then_case);
        if (else_case.defined())
            out = Seq::make({out, Predicator(Not::make(cond)).mutate(else_case)});
        return out;
    }
    Stmt visit(const Allocate*) override {
        throw CannotVectorize();
    }
    Stmt visit(const AssertStmt* op) override {
        return refuse_if_changed(op);
    }
    Stmt visit(const AttrStmt* op) override {
        if (!mutate(op->value).same_as(op->value)) throw CannotVectorize();
        return IRMutator::visit(op);
    }
    Stmt visit(const Evaluate* op) override {
        if (has_impure_call(op)) throw CannotVectorize();
        return IRMutator::visit(op);
    }

private:
    Var var_;
    Expr ramp_;
    int lanes_;
    const VectorContext& context_;
};

/// Vectorizes loops bottom-up (inner loops first), falling back to serial loops.
class LoopVectorizer : public IRMutator {
public:
    using IRMutator::visit;

protected:
    Stmt visit(const Allocate* op) override {
        int64_t size = 1;
        for (const Expr& e : op->extents) {
            std::optional<int64_t> n = as_const_int(e);
            size = n && *n > 0 && size > 0 ? size * *n : 0;
        }
        if (size > 0) context_.allocated[op->buffer_var.get()] = size;
        Stmt out = IRMutator::visit(op);
        context_.allocated.erase(op->buffer_var.get());
        return out;
    }
    Stmt visit(const For* op) override {
        if (op->kind != ForKind::Vectorized)
            context_.loops[op->loop_var.get()] = Interval::from_range(Range(op->min, op->extent));
        Stmt body = mutate(op->body);
        context_.loops.erase(op->loop_var.get());
        if (op->kind != ForKind::Vectorized) {
            if (body.same_as(op->body)) return op;
            return For::make(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag);
        }
        std::optional<int64_t> n = as_const_int(op->extent);
        Stmt serial = For::make(op->loop_var, op->min, op->extent, ForKind::Serial, body);
        if (!n || *n <= 0) return serial;
        n = live_lanes(op, *n, context_.loops);
        if (*n == 1) return substitute(body, op->loop_var, op->min);
        TESSEL_CHECK(*n <= 65535) << "vectorized loop " << op->loop_var.name() << " of " << *n
                                  << " lanes";
        try {
            return Widener(op->loop_var, op->min, static_cast<int>(*n), context_).mutate(body);
        } catch (const CannotVectorize&) {
            return serial;
        }
    }

private:
    VectorContext context_;
};

}  // namespace

Stmt vectorize_loops(const Stmt& s) {
    return LoopVectorizer().mutate(s);
}

}  // namespace tessel
