// The rewrites that need more than a pattern: canonical linear forms, division by constants
// using bounds and modular facts, canonical comparisons, cast chains and vector lifting.
#include "ConstFold.h"
#include "ExprEqual.h"
#include "IntMath.h"
#include "Simplifier.h"

namespace tessel::internal {

namespace {

Expr changed_or_undefined(const Expr& r, const Expr& e) {
    return (r.defined() && !expr_equal(r, e)) ? r : Expr();
}

bool lossless_float_cast(Type from, Type to) {
    if (!to.is_float()) return false;
    if (from.is_float()) return to.bits > from.bits;  // f16/bf16 → f32 → f64
    if (!from.is_int_or_uint() && !from.is_bool()) return false;
    int mantissa = to.is_bfloat() ? 8 : to.bits == 16 ? 11 : to.bits == 32 ? 24 : 53;
    int needed = from.is_bool() ? 1 : from.is_int() ? from.bits - 1 : from.bits;
    return needed <= mantissa;
}

/// The comparison's truth value from bounds of (a - b) (or nothing).
std::optional<bool> decide(IRNodeType op, const ConstInterval& d) {
    switch (op) {
        case IRNodeType::LT:
            if (d.max && *d.max < 0) return true;
            if (d.min && *d.min >= 0) return false;
            break;
        case IRNodeType::LE:
            if (d.max && *d.max <= 0) return true;
            if (d.min && *d.min > 0) return false;
            break;
        case IRNodeType::EQ:
        case IRNodeType::NE: {
            bool eq = op == IRNodeType::EQ;
            if (d.min && d.max && *d.min == 0 && *d.max == 0) return eq;
            if ((d.max && *d.max < 0) || (d.min && *d.min > 0)) return !eq;
            break;
        }
        default: break;
    }
    return std::nullopt;
}

/// Bounds of a - b from separate bounds of a and b (any integer type: no wrapping involved).
ConstInterval difference(const ConstInterval& a, const ConstInterval& b) {
    ConstInterval d;
    if (a.min && b.max) d.min = fit64(int128(*a.min) - *b.max);
    if (a.max && b.min) d.max = fit64(int128(*a.max) - *b.min);
    return d;
}

}  // namespace

// swizzle(x + c) -> swizzle(x) + c for x >= 0 and c > 0 a constant multiple of span * phases: c
// moves whole phase cycles and leaves the XORed bits alone, so unrolled tiles share one swizzled
// base. With SimplifyOptions::swizzle_cycles_out (scalar indices), swizzle(x + y) -> swizzle(x) + y
// for y a sum of terms that are each such a multiple (a constant, a stage offset such as
// (k % 3) * 8192, a warp's block of rows; y may be negative: x + y >= 0 is the swizzle's domain)
// and x not constant, so the part that changes with a pipelined loop stays outside the swizzle,
// where the CUDA compiler can hoist the rest.
Expr Simplifier::rewrite_swizzle(const Call* op) {
    const Expr& o = op->args[0];
    int64_t cycle = *as_const_int(op->args[2]) * *as_const_int(op->args[3]);
    // A dense vector inside one 16-byte chunk (a ramp that simplification made dense): the
    // swizzle moves the chunk whole, as storage_flatten's swizzle_index keeps it.
    if (const auto* r = o.as<Ramp>();
        r && is_one(r->stride) && *as_const_int(op->args[1]) % r->lanes == 0) {
        const ModularSet m = modular(r->base);
        if (m.coeff % r->lanes == 0 && mod_floor(m.base, r->lanes) == 0)
            return Ramp::make(
                Call::make(Intrinsic::swizzle, {r->base, op->args[1], op->args[2], op->args[3]}),
                r->stride, r->lanes);
    }
    if (o.type().is_vector() || !options_.swizzle_cycles_out) {  // whole-cycle constants only
        const Add* add = o.as<Add>();
        auto c = add ? as_const_int(add->b) : std::nullopt;
        if (!c || *c <= 0 || *c % cycle != 0) return Expr();
        ConstInterval x = const_bounds(add->a);
        if (!x.min || *x.min < 0) return Expr();
        return Add::make(
            Call::make(Intrinsic::swizzle, {add->a, op->args[1], op->args[2], op->args[3]}),
            add->b);
    }
    LinearForm f = linear_form(o);
    if (f.wrapped) return Expr();
    LinearForm kept{f.type, {}, 0, false}, moved{f.type, {}, 0, false};
    auto multiple = [&](int128 v) { return v % cycle == 0; };
    for (const LinearTerm& t : f.terms) {
        ModularSet m = modular(t.term);
        bool whole = multiple(t.coeff) ||
                     (multiple(int128(t.coeff) * m.coeff) && multiple(int128(t.coeff) * m.base));
        (whole ? moved : kept).terms.push_back(t);
    }
    // The constant's whole cycles move too (its remainder, in [0, cycle), stays inside).
    kept.constant = static_cast<int64_t>(((int128(f.constant) % cycle) + cycle) % cycle);
    moved.constant = f.constant - kept.constant;
    // Nothing to move, or nothing variable left inside: swizzle(constant) would fold away, and a
    // tensor-core tile operand needs its swizzle call (ir/IR.h); the code generator splits the
    // cycles out of such a tile's origin itself.
    if ((moved.terms.empty() && moved.constant == 0) || kept.terms.empty()) return Expr();
    Expr x = linear_to_expr(kept);
    ConstInterval b = const_bounds(x);
    if (!b.min || *b.min < 0) return Expr();
    return Add::make(Call::make(Intrinsic::swizzle, {x, op->args[1], op->args[2], op->args[3]}),
                     linear_to_expr(moved));
}

Expr Simplifier::lift_broadcast(const Expr& e) {
    const Expr *a, *b;
    if (binary_operands(e, &a, &b)) {
        const auto *ba = a->as<Broadcast>(), *bb = b->as<Broadcast>();
        if (!ba || !bb) return Expr();
        return Broadcast::make(make_binary(e.node_type(), ba->value, bb->value), ba->lanes);
    }
    if (const auto* op = e.as<Not>()) {
        if (const auto* ba = op->a.as<Broadcast>())
            return Broadcast::make(Not::make(ba->value), ba->lanes);
    } else if (const auto* op = e.as<Cast>()) {
        if (const auto* ba = op->value.as<Broadcast>())
            return Broadcast::make(Cast::make(op->type.element_of(), ba->value), ba->lanes);
    } else if (const auto* op = e.as<Select>()) {
        const auto *t = op->true_value.as<Broadcast>(), *f = op->false_value.as<Broadcast>();
        if (!t || !f) return Expr();
        Expr c = op->condition;
        if (const auto* bc = c.as<Broadcast>()) c = bc->value;
        if (c.type().is_vector()) return Expr();
        return Broadcast::make(Select::make(c, t->value, f->value), t->lanes);
    }
    return Expr();
}

Expr Simplifier::rewrite_linear(const Expr& e) {
    if (!e.type().is_int_or_uint()) return Expr();
    LinearForm f = linear_form(e);
    // A wrapped constant or coefficient is exact modulo 2^bits but changes the mathematical
    // value, which later no-overflow reasoning on index types relies on: keep the input.
    if (f.wrapped && assumes_no_overflow(e.type())) return Expr();
    merge_div_mod(&f);
    return changed_or_undefined(linear_to_expr(f), e);
}

Expr Simplifier::rewrite_div_mod(const Expr& e) {
    if (!e.type().is_int_or_uint()) return Expr();
    const Expr *pa, *pb;
    binary_operands(e, &pa, &pb);
    // A dense ramp of L lanes from a multiple of L, by a multiple of L, stays inside one quotient:
    // ramp(b, 1, L) / c = broadcast(b / c), ramp(b, 1, L) % c = ramp(b % c, 1, L) (a vector copy
    // into a blocked layout, one 16-byte chunk of a column panel).
    if (const auto* r = pa->as<Ramp>(); r && is_one(r->stride) && pb->as<Broadcast>()) {
        auto c = as_const_int(pb->as<Broadcast>()->value);
        const ModularSet m = modular(r->base);
        const int64_t lanes = r->lanes;
        if (c && *c > 0 && *c % lanes == 0 && m.coeff % lanes == 0 &&
            mod_floor(m.base, lanes) == 0) {
            const Expr base = r->base, cc = pb->as<Broadcast>()->value;
            if (e.node_type() == IRNodeType::FloorDiv)
                return Broadcast::make(FloorDiv::make(base, cc), r->lanes);
            return Ramp::make(FloorMod::make(base, cc), r->stride, r->lanes);
        }
    }
    const Expr& a = *pa;
    auto c = as_const_int(*pb);
    if (!c || *c <= 0) return Expr();
    bool is_div = e.node_type() == IRNodeType::FloorDiv;
    Type t = e.type();
    if (!is_div) {
        ModularSet m = modular(a);
        if (m.coeff > 0 && m.coeff % *c == 0) return make_const(t, mod_floor(m.base, *c));
    }
    ConstInterval b = const_bounds(a);
    if (b.min && b.max && div_floor(*b.min, *c) == div_floor(*b.max, *c)) {
        int64_t q = div_floor(*b.min, *c);
        if (is_div) return make_const(t, q);
        int128 qc = int128(q) * *c;  // a - q*c, only if q*c is a value of the type
        if (qc < type_min128(t) || qc > type_max128(t)) return Expr();
        return q == 0 ? a : Sub::make(a, make_const(t, static_cast<int64_t>(qc)));
    }
    if (!assumes_no_overflow(t)) return Expr();
    // (q*c + r) / c = q + r / c and (q*c + r) % c = r % c, exactly (no overflow).
    LinearForm f = linear_form(a), quot, rem;
    if (f.wrapped) return Expr();
    quot.type = rem.type = t;
    for (const LinearTerm& term : f.terms) {
        if (term.coeff % *c == 0) {
            quot.add_term(term.term, term.coeff / *c);
        } else {
            rem.add_term(term.term, term.coeff);
        }
    }
    quot.constant = div_floor(f.constant, *c);
    rem.constant = f.constant - quot.constant * *c;
    if (quot.terms.empty()) return Expr();  // only a constant moves out: not simpler
    Expr r = linear_to_expr(rem);
    if (!is_div) return FloorMod::make(r, *pb);
    return Add::make(linear_to_expr(quot), FloorDiv::make(r, *pb));
}

namespace {
/// Rebuilds `P op N + K` from a linear form of a - b divided by its coefficients' gcd:
/// positive terms on the left, negated negative terms and the constant on the right.
Expr canonical_compare(IRNodeType op, const LinearForm& d, Type result) {
    int64_t g = d.coeff_gcd();
    if (g == 0) return Expr();
    int128 k;  // the comparison becomes P/g op N/g + k
    int128 c = d.constant;
    switch (op) {
        case IRNodeType::LT: k = div_floor128(-c + g - 1, g); break;  // ceil(-c / g)
        case IRNodeType::LE: k = div_floor128(-c, g); break;
        default:
            if (c % g != 0) return make_const(result, int64_t(op == IRNodeType::NE));
            k = -c / g;
    }
    int64_t smin = Int(d.type.bits).min_int();
    for (const LinearTerm& t : d.terms) {
        if (t.coeff == smin) return Expr();  // cannot be negated
    }
    LinearForm p, n;
    p.type = n.type = d.type;
    for (const LinearTerm& t : d.terms) {
        if (t.coeff > 0)
            p.add_term(t.term, t.coeff / g);
        else
            n.add_term(t.term, -(t.coeff / g));
    }
    if (k <= type_min128(d.type) || k > type_max128(d.type)) return Expr();
    Expr lhs, rhs;
    if (p.terms.empty()) {
        lhs = make_const(d.type, static_cast<int64_t>(-k));
        rhs = linear_to_expr(n);
    } else {
        n.constant = static_cast<int64_t>(k);
        lhs = linear_to_expr(p);
        rhs = linear_to_expr(n);
    }
    return make_binary(op, lhs, rhs);
}
}  // namespace

Expr Simplifier::rewrite_compare(const Expr& e) {
    const Expr *pa, *pb;
    if (!binary_operands(e, &pa, &pb)) return Expr();
    IRNodeType op = e.node_type();
    if (op == IRNodeType::GT) return LT::make(*pb, *pa);
    if (op == IRNodeType::GE) return LE::make(*pb, *pa);
    Type t = pa->type();
    if (!t.is_int_or_uint()) return Expr();
    auto result = [&](bool v) { return make_const(e.type(), int64_t(v)); };
    if (auto r = decide(op, difference(const_bounds(*pa), const_bounds(*pb)))) return result(*r);
    bool eq_like = op == IRNodeType::EQ || op == IRNodeType::NE;
    if (!assumes_no_overflow(t)) {
        if (eq_like) {
            ModularSet m = modular(Sub::make(*pa, *pb));
            if (m.coeff > 0 && m.base != 0) return result(op == IRNodeType::NE);
        }
        return Expr();
    }
    LinearForm d = linear_difference(*pa, *pb);
    if (d.wrapped) return Expr();  // a - b is not the mathematical difference
    if (auto r = decide(op, linear_bounds(d))) return result(*r);
    if (eq_like && !d.terms.empty()) {
        ModularSet m = modular(linear_to_expr(d));
        if (m.coeff > 0 && m.base != 0) return result(op == IRNodeType::NE);
    }
    if (auto r = symbolic_decide(e)) return result(*r);
    return changed_or_undefined(canonical_compare(op, d, e.type()), e);
}

Expr Simplifier::rewrite_cast(const Cast* op) {
    Type to = op->type;
    if (op->value.type() == to) return op->value;
    const auto* inner = op->value.as<Cast>();
    if (!inner) return Expr();
    const Expr& x = inner->value;
    Type mid = inner->type, from = x.type();
    bool keeps_value = is_lossless_cast(from, mid) || lossless_float_cast(from, mid);
    bool int_chain = from.is_int_or_uint() && mid.is_int_or_uint() && to.is_int_or_uint() &&
                     to.bits <= mid.bits;  // wrapping twice = wrapping once to the narrower
    if (!keeps_value && !int_chain) return Expr();
    return from == to ? x : Cast::make(to, x);
}

namespace {
/// Commutative nodes other than + and * (which the linear form orders) put a constant last.
Expr constant_to_the_right(const Expr& e) {
    switch (e.node_type()) {
        case IRNodeType::Min:
        case IRNodeType::Max:
        case IRNodeType::EQ:
        case IRNodeType::NE:
        case IRNodeType::And:
        case IRNodeType::Or: break;
        default: return Expr();
    }
    const Expr *a, *b;
    binary_operands(e, &a, &b);
    bool ca = const_bits(*a) || as_const_float(*a), cb = const_bits(*b) || as_const_float(*b);
    return (ca && !cb) ? make_binary(e.node_type(), *b, *a) : Expr();
}
}  // namespace

Expr Simplifier::rewrite_builtin(const Expr& e) {
    if (Expr r = lift_broadcast(e); r.defined()) return r;
    if (Expr r = constant_to_the_right(e); r.defined()) return r;
    switch (e.node_type()) {
        case IRNodeType::Ramp: {
            const auto* op = e.as<Ramp>();
            if (is_zero(op->stride)) return Broadcast::make(op->base, op->lanes);
            return Expr();
        }
        case IRNodeType::Add:
        case IRNodeType::Sub:
        case IRNodeType::Mul: return rewrite_linear(e);
        case IRNodeType::FloorDiv:
        case IRNodeType::FloorMod: return rewrite_div_mod(e);
        case IRNodeType::EQ:
        case IRNodeType::NE:
        case IRNodeType::LT:
        case IRNodeType::LE:
        case IRNodeType::GT:
        case IRNodeType::GE: return rewrite_compare(e);
        case IRNodeType::Cast: return rewrite_cast(e.as<Cast>());
        case IRNodeType::Call: {
            const auto* op = e.as<Call>();
            if (op->op == Intrinsic::swizzle) return rewrite_swizzle(op);
            if (op->op != Intrinsic::if_then_else) return Expr();
            if (auto c = const_bits(op->args[0])) return *c ? op->args[1] : op->args[2];
            if (expr_equal(op->args[1], op->args[2])) return op->args[1];
            return Expr();
        }
        default: return Expr();
    }
}

}  // namespace tessel::internal
