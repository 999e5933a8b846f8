// LowerAsyncCopies: see the header.
#include "tessel/lower/LowerAsyncCopies.h"

#include <algorithm>
#include <set>

#include "PassUtil.h"
#include "tessel/arith/Modular.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/Equality.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"

namespace tessel {

namespace {

/// One side of a copy: a buffer and the first index of each lane (a scalar or a Ramp), or a
/// vector index of another form (a gather: its lanes are copied one by one).
struct Side {
    Var buffer;
    Expr base, stride;  ///< stride undefined: one lane
    Expr gather;        ///< defined for a vector index that is no Ramp
};

Side side_of(const Var& buffer, const Expr& raw) {
    // A vector index may simplify to a Ramp (a blocked layout's ramp / c and ramp % c).
    const Expr index = raw.type().is_vector() && !raw.as<Ramp>() ? simplify(raw) : raw;
    if (const auto* r = index.as<Ramp>()) return {buffer, r->base, r->stride, Expr()};
    if (index.type().is_vector()) return {buffer, Expr(), Expr(), index};
    return {buffer, index, Expr(), Expr()};
}

/// Index of lane `k` of a side (undefined for a gather lane lane_of cannot write).
Expr lane(const Side& s, int k) {
    if (s.gather.defined()) return internal::lane_of(s.gather, k);
    if (!s.stride.defined() || k == 0) return s.base;
    return s.base + s.stride * make_const(s.base.type(), k);
}

class Lowerer : public IRMutator {
public:
    using IRMutator::visit;

protected:
    Stmt visit(const AttrStmt* op) override {
        if (op->key != "async_copy") return IRMutator::visit(op);
        bool outer = inside_;
        inside_ = true;
        Stmt body = mutate(op->body);
        inside_ = outer;
        return body;
    }
    Stmt visit(const Allocate* op) override {
        if (op->scope == StorageScope::Shared) shared_.insert(op->buffer_var.get());
        if (op->scope != StorageScope::Global) on_chip_.insert(op->buffer_var.get());
        return IRMutator::visit(op);
    }
    Stmt visit(const LetStmt* op) override {
        scope_[op->var.get()] = modular_set_of(op->value, scope_);
        return IRMutator::visit(op);
    }
    Stmt visit(const Store* op) override {
        if (!inside_) return IRMutator::visit(op);
        Stmt copies = as_copies(op);
        return copies.defined() ? copies : IRMutator::visit(op);
    }

private:
    /// The store as cp_async calls, or undefined when it is not a plain copy from global memory.
    Stmt as_copies(const Store* op) {
        if (!shared_.count(op->buffer_var.get())) return Stmt();
        if (op->predicate.defined() && !is_one(op->predicate)) return Stmt();
        // The guard: the terms of nested `if_then_else(c, ..., 0)` conditions (a padded tile's
        // bounds around an inlined pad's), one conjunction.
        Expr value = op->value, guard;
        std::vector<Expr> terms;
        while (const auto* c = value.as<Call>()) {
            if (c->op != Intrinsic::if_then_else || !is_zero_value(c->args[2])) break;
            conjuncts(c->args[0], &terms);
            value = c->args[1];
        }
        const bool vector_guard = std::any_of(terms.begin(), terms.end(),
                                              [](const Expr& t) { return t.type().is_vector(); });
        for (Expr t : terms) {
            if (vector_guard && !t.type().is_vector()) t = Broadcast::make(t, value.type().lanes);
            guard = guard.defined() ? And::make(guard, t) : t;
        }
        const auto* load = value.as<Load>();
        if (!load || on_chip_.count(load->buffer_var.get())) return Stmt();
        // A predicate on the load repeats the guard's terms (vectorize_loops masks the lanes it
        // skips).
        if (load->predicate.defined() && !is_one(load->predicate)) {
            std::vector<Expr> pred_terms;
            conjuncts(load->predicate, &pred_terms);
            for (const Expr& t : pred_terms)
                if (std::none_of(terms.begin(), terms.end(),
                                 [&](const Expr& g) { return structural_equal(t, g); }))
                    return Stmt();
        }
        const int lanes = value.type().lanes, size = value.type().bytes();  // per lane
        Side dst = side_of(op->buffer_var, op->index), src = side_of(load->buffer_var, load->index);
        // Lanes guarded one by one (the k edge of a tile), or gathered (an index of division and
        // remainder by a tile that the vector crosses): one copy per lane, each with its lane of
        // the guard.
        const bool per_lane = (guard.defined() && guard.type().is_vector()) ||
                              dst.gather.defined() || src.gather.defined();
        int chunk =
            per_lane ? (size == 4 || size == 8 ? 1 : 0) : widest_chunk(dst, src, lanes, size);
        // Lanes of 1 or 2 bytes whose guard holds for a prefix of them (the k edge of a row
        // padded to whole vectors): one copy a chunk, of the bytes of its lanes inside; cp.async
        // fills the rest with zeros.
        if (chunk == 0 && guard.defined() && guard.type().is_vector() && !dst.gather.defined() &&
            !src.gather.defined() && holds_for_a_prefix(guard)) {
            chunk = widest_chunk(dst, src, lanes, size);
            if (chunk == 0) return Stmt();
            std::vector<Stmt> out;
            for (int k = 0; k < lanes; k += chunk) {
                Expr bytes = make_zero(Int(32));
                for (int l = k; l < k + chunk; ++l) {
                    Expr g = internal::lane_of(guard, l);
                    if (!g.defined()) return Stmt();
                    bytes = bytes + select(g, make_const(Int(32), size), make_zero(Int(32)));
                }
                Expr d = lane(dst, k), from = lane(src, k), first = internal::lane_of(guard, k);
                if (!d.defined() || !from.defined()) return Stmt();
                out.push_back(Evaluate::make(Call::make(
                    Intrinsic::cp_async,
                    {dst.buffer, d, src.buffer, select(first, from, make_zero(from.type())),
                     make_const(Int(32), chunk * size), bytes})));
            }
            return Seq::make(out);
        }
        if (chunk == 0) return Stmt();
        std::vector<Stmt> out;
        for (int k = 0; k < lanes; k += chunk) {
            Expr g =
                guard.defined() && guard.type().is_vector() ? internal::lane_of(guard, k) : guard;
            Expr d = lane(dst, k), from = lane(src, k);
            if ((guard.defined() && !g.defined()) || !d.defined() || !from.defined()) return Stmt();
            out.push_back(copy(dst.buffer, d, src.buffer, from, chunk * size, g));
        }
        return Seq::make(out);
    }

    /// The terms of a conjunction, its broadcasts taken apart; a vector term is simplified first
    /// (over a window's digits, `ramp(b, 1, 8) / 64 % 3` with b a multiple of 8, it is a
    /// broadcast).
    static void conjuncts(const Expr& e, std::vector<Expr>* out) {
        const Expr x = e.type().is_vector() && !e.as<Broadcast>() ? simplify(e) : e;
        if (const auto* b = x.as<Broadcast>()) return conjuncts(b->value, out);
        if (const auto* a = x.as<And>()) {
            conjuncts(a->a, out);
            conjuncts(a->b, out);
            return;
        }
        out->push_back(x);
    }

    /// Whether a vector condition's true lanes are always a prefix of its lanes: a conjunction
    /// of lane-invariant terms and bounds `ramp(base, stride > 0) < (or <=) bound`.
    static bool holds_for_a_prefix(const Expr& e) {
        if (!e.type().is_vector() || e.as<Broadcast>()) return true;
        if (const auto* a = e.as<And>())
            return holds_for_a_prefix(a->a) && holds_for_a_prefix(a->b);
        auto rising_below = [](const Expr& x, const Expr& bound) {
            const auto* r = x.as<Ramp>();
            std::optional<int64_t> stride = r ? as_const_int(r->stride) : std::nullopt;
            return stride && *stride > 0 && (!bound.type().is_vector() || bound.as<Broadcast>());
        };
        if (const auto* lt = e.as<LT>()) return rising_below(lt->a, lt->b);
        if (const auto* le = e.as<LE>()) return rising_below(le->a, le->b);
        if (const auto* gt = e.as<GT>()) return rising_below(gt->b, gt->a);
        if (const auto* ge = e.as<GE>()) return rising_below(ge->b, ge->a);
        return false;
    }

    static bool is_zero_value(const Expr& e) {
        auto f = as_const_float(e);
        return f ? *f == 0.0 : is_zero(e);
    }

    /// Lanes per copy: 16, 8 or 4 bytes of dense, proven-aligned lanes, else 0.
    int widest_chunk(const Side& dst, const Side& src, int lanes, int size) {
        for (int bytes : {16, 8, 4}) {
            if (bytes % size != 0) continue;
            const int chunk = bytes / size;
            if (lanes % chunk != 0) continue;
            if (chunk == 1) return 1;
            if (dense_and_aligned(dst, chunk) && dense_and_aligned(src, chunk)) return chunk;
        }
        return 0;
    }
    bool dense_and_aligned(const Side& s, int chunk) {
        if (s.stride.defined() && !is_one(s.stride)) return false;
        ModularSet m = modular_set_of(s.base, scope_);
        return m.coeff % chunk == 0 && m.base % chunk == 0;
    }

    static Stmt copy(const Var& dst, const Expr& d, const Var& src, Expr s, int bytes,
                     const Expr& guard) {
        Expr src_bytes = make_const(Int(32), bytes);
        if (guard.defined()) {
            s = select(guard, s, make_zero(s.type()));
            src_bytes = select(guard, src_bytes, make_zero(Int(32)));
        }
        return Evaluate::make(Call::make(Intrinsic::cp_async,
                                         {dst, d, src, s, make_const(Int(32), bytes), src_bytes}));
    }

    bool inside_ = false;
    std::set<const Variable*> shared_, on_chip_;
    ModularScope scope_;
};

}  // namespace

Stmt lower_async_copies(const Stmt& s) {
    return Lowerer().mutate(s);
}

}  // namespace tessel
