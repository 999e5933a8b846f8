// Symbolic interval analysis (bounds_of) and proofs by bounds (can_prove).
#include "tessel/arith/Interval.h"

#include "ConstFold.h"
#include "ExprEqual.h"
#include "IntMath.h"
#include "Simplifier.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRVisitor.h"

#include <unordered_set>

namespace tessel {

using internal::binary_operands;
using internal::const_bits;
using internal::ConstScope;
using internal::expr_equal;
using internal::find_const_bounds;

Interval Interval::from_range(const Range& r) {
    Expr one = make_one(r.extent.type());
    return Interval(simplify(r.min), simplify(Sub::make(Add::make(r.min, r.extent), one)));
}

bool Interval::is_single_point() const {
    return min.defined() && max.defined() && expr_equal(min, max);
}

Interval interval_union(const Interval& a, const Interval& b) {
    Interval r;
    if (a.min.defined() && b.min.defined()) r.min = simplify(Min::make(a.min, b.min));
    if (a.max.defined() && b.max.defined()) r.max = simplify(Max::make(a.max, b.max));
    return r;
}

Interval interval_intersect(const Interval& a, const Interval& b) {
    Interval r;
    r.min = !a.min.defined() ? b.min : !b.min.defined() ? a.min : simplify(Max::make(a.min, b.min));
    r.max = !a.max.defined() ? b.max : !b.max.defined() ? a.max : simplify(Min::make(a.max, b.max));
    return r;
}

namespace {

/// Constant bounds of every variable of a symbolic scope (ends resolved through the scope).
ConstScope constant_scope(const Scope& scope) {
    ConstScope c;
    for (int pass = 0; pass < 3; ++pass) {
        for (const auto& [v, i] : scope) {
            ConstInterval ci;
            if (i.min.defined()) ci.min = find_const_bounds(i.min, c).min;
            if (i.max.defined()) ci.max = find_const_bounds(i.max, c).max;
            c[v] = ci;
        }
    }
    return c;
}

Interval type_range(Type t) {
    Type et = t.element_of();
    if (et.is_bool()) return Interval(const_false(), const_true());
    if (!et.is_int_or_uint()) return Interval::everything();
    return Interval(min_value(et), max_value(et));
}

/// Scope variables that other scope variables' intervals mention ("outer" variables).
std::unordered_set<const Variable*> outer_variables(const Scope& scope) {
    std::unordered_set<const Variable*> outer;
    for (const auto& [v, i] : scope) {
        for (const Expr& end : {i.min, i.max}) {
            if (!end.defined()) continue;
            post_order_visit(end, [&](const IRNode* n) {
                if (n->node_type == IRNodeType::Variable) {
                    const auto* var = static_cast<const Variable*>(n);
                    if (var != v && scope.count(var)) outer.insert(var);
                }
            });
        }
    }
    return outer;
}

class BoundsFinder {
public:
    explicit BoundsFinder(const Scope& scope) : scope_(scope), cscope_(constant_scope(scope)) {}
    /// Keeps the `keep` variables symbolic (their constant bounds still apply to the ends).
    BoundsFinder(const Scope& scope, std::unordered_set<const Variable*> keep)
        : scope_(scope), cscope_(constant_scope(scope)), keep_(std::move(keep)) {}

    Interval get(const Expr& e);
    std::optional<int64_t> lower(const Expr& end) {
        return end.defined() ? find_const_bounds(end, cscope_).min : std::nullopt;
    }
    std::optional<int64_t> upper(const Expr& end) {
        return end.defined() ? find_const_bounds(end, cscope_).max : std::nullopt;
    }
    const ConstScope& const_scope() const { return cscope_; }

private:
    Interval node(const Expr& e);
    Interval binary(const Expr& e, const Expr& a, const Expr& b);
    Interval mul(const Interval& a, const Interval& b);
    Interval divide(const Expr& e, const Interval& a, const Interval& b);
    Interval modulo(const Expr& e, const Interval& a, const Interval& b);
    Interval cast(const Cast* op);
    Interval call(const Call* op);

    const Scope& scope_;
    ConstScope cscope_;
    std::unordered_set<const Variable*> keep_;
    Scope local_;
};

Expr simp(const Expr& e) {
    return e.defined() ? simplify(e) : e;
}

/// op(a, b) of two interval ends, simplified; undefined (unbounded) if an end is, or if both
/// are constants whose exact result leaves the type's range (folding would wrap it).
Expr both(IRNodeType t, const Expr& a, const Expr& b) {
    if (!a.defined() || !b.defined()) return Expr();
    auto ca = const_bits(a), cb = const_bits(b);
    Type ty = a.type();
    if (ca && cb && ty.is_int_or_uint() &&
        (t == IRNodeType::Add || t == IRNodeType::Sub || t == IRNodeType::Mul)) {
        internal::int128 x = internal::const_value128(*ca, ty),
                         y = internal::const_value128(*cb, ty);
        internal::int128 r = t == IRNodeType::Add ? x + y : t == IRNodeType::Sub ? x - y : x * y;
        if (r < internal::type_min128(ty) || r > internal::type_max128(ty)) return Expr();
    }
    return simp(internal::make_binary(t, a, b));
}

Interval BoundsFinder::get(const Expr& e) {
    Interval r = node(e);
    Type t = e.type();
    if (!t.is_int_or_uint() || internal::assumes_no_overflow(t) || r.is_single_point()) return r;
    // A wrapping type: only constant ends inside the type's range are safe.
    Interval range = type_range(t);
    auto lo = as_const_int(r.min), hi = as_const_int(r.max);
    if (lo && hi && *lo >= *as_const_int(range.min) &&
        (t.is_uint() && t.bits == 64 ? *hi >= 0 : *hi <= *as_const_int(range.max)))
        return r;
    return range;
}

Interval BoundsFinder::node(const Expr& e) {
    // Bounds of a vector are over its lanes: always scalar expressions.
    if (const auto* bc = e.as<Broadcast>()) return get(bc->value);
    if (const_bits(e) || as_const_float(e)) return Interval::single_point(e);
    if (const auto* v = e.as<Variable>()) {
        if (v->type.is_vector()) return type_range(v->type);
        if (auto it = local_.find(v); it != local_.end()) return it->second;
        if (keep_.count(v)) return Interval::single_point(e);
        if (auto it = scope_.find(v); it != scope_.end()) return it->second;
        return Interval::single_point(e);
    }
    const Expr *a, *b;
    if (binary_operands(e, &a, &b)) return binary(e, *a, *b);
    switch (e.node_type()) {
        case IRNodeType::Not: {
            Interval x = get(e.as<Not>()->a);
            if (x.is_single_point()) return Interval::single_point(simp(Not::make(x.min)));
            return type_range(e.type());
        }
        case IRNodeType::Select: {
            const auto* op = e.as<Select>();
            Interval c = get(op->condition);
            if (auto v = as_const_int(c.min); v && c.is_single_point())
                return get(*v ? op->true_value : op->false_value);
            return interval_union(get(op->true_value), get(op->false_value));
        }
        case IRNodeType::Cast: return cast(e.as<Cast>());
        case IRNodeType::Ramp: {
            const auto* op = e.as<Ramp>();
            Expr last = Add::make(
                op->base,
                Mul::make(op->stride, make_const(op->stride.type(), int64_t(op->lanes - 1))));
            return interval_union(get(op->base), get(last));
        }
        case IRNodeType::Broadcast: return get(e.as<Broadcast>()->value);
        case IRNodeType::Let: {
            const auto* op = e.as<Let>();
            local_[op->var.get()] = get(op->value);
            return get(op->body);
        }
        case IRNodeType::Call: return call(e.as<Call>());
        default: return type_range(e.type());  // loads, tensor reads, reductions
    }
}

Interval BoundsFinder::binary(const Expr& e, const Expr& ea, const Expr& eb) {
    Interval a = get(ea), b = get(eb);
    IRNodeType t = e.node_type();
    if (a.is_single_point() && b.is_single_point())
        return Interval::single_point(simp(internal::make_binary(t, a.min, b.min)));
    switch (t) {
        case IRNodeType::Add: return Interval(both(t, a.min, b.min), both(t, a.max, b.max));
        case IRNodeType::Sub: return Interval(both(t, a.min, b.max), both(t, a.max, b.min));
        case IRNodeType::Mul: return mul(a, b);
        case IRNodeType::Div:
        case IRNodeType::FloorDiv: return divide(e, a, b);
        case IRNodeType::Mod:
        case IRNodeType::FloorMod: return modulo(e, a, b);
        case IRNodeType::Min:
            return Interval(both(t, a.min, b.min), !a.max.defined()   ? b.max
                                                   : !b.max.defined() ? a.max
                                                                      : both(t, a.max, b.max));
        case IRNodeType::Max:
            return Interval(!a.min.defined()   ? b.min
                            : !b.min.defined() ? a.min
                                               : both(t, a.min, b.min),
                            both(t, a.max, b.max));
        default: {
            // A comparison or And/Or that the simplifier may still decide.
            Expr s = simplify(e);
            if (const_bits(s)) return Interval::single_point(s);
            return type_range(e.type());
        }
    }
}

Interval BoundsFinder::mul(const Interval& a, const Interval& b) {
    auto sign = [&](const Interval& i) -> int {  // 1: >= 0, -1: <= 0, 0: unknown
        if (auto lo = lower(i.min); lo && *lo >= 0) return 1;
        if (auto hi = upper(i.max); hi && *hi <= 0) return -1;
        return 0;
    };
    const Interval *x = &a, *y = &b;
    if (x->is_single_point() && !y->is_single_point()) std::swap(x, y);
    if (y->is_single_point()) {
        int s = sign(*y);
        if (s > 0)
            return Interval(both(IRNodeType::Mul, x->min, y->min),
                            both(IRNodeType::Mul, x->max, y->min));
        if (s < 0)
            return Interval(both(IRNodeType::Mul, x->max, y->min),
                            both(IRNodeType::Mul, x->min, y->min));
    }
    if (sign(a) > 0 && sign(b) > 0)
        return Interval(both(IRNodeType::Mul, a.min, b.min), both(IRNodeType::Mul, a.max, b.max));
    if (!a.is_bounded() || !b.is_bounded()) return Interval::everything();
    Expr p[4] = {both(IRNodeType::Mul, a.min, b.min), both(IRNodeType::Mul, a.min, b.max),
                 both(IRNodeType::Mul, a.max, b.min), both(IRNodeType::Mul, a.max, b.max)};
    for (const Expr& x : p) {
        if (!x.defined()) return Interval::everything();
    }
    return Interval(simp(Min::make(Min::make(p[0], p[1]), Min::make(p[2], p[3]))),
                    simp(Max::make(Max::make(p[0], p[1]), Max::make(p[2], p[3]))));
}

Interval BoundsFinder::divide(const Expr& e, const Interval& a, const Interval& b) {
    IRNodeType t = e.node_type();
    auto c = b.is_single_point() ? as_const_int(b.min) : std::nullopt;
    if (c && *c > 0) return Interval(both(t, a.min, b.min), both(t, a.max, b.min));
    if (c && *c < 0) return Interval(both(t, a.max, b.min), both(t, a.min, b.min));
    auto blo = lower(b.min);
    if (!blo || *blo <= 0 || !b.is_bounded() || !a.is_bounded()) return type_range(e.type());
    // Positive divisor: the extremes lie on the corners.
    if (auto alo = lower(a.min); alo && *alo >= 0)
        return Interval(both(t, a.min, b.max), both(t, a.max, b.min));
    return Interval(simp(Min::make(internal::make_binary(t, a.min, b.min),
                                   internal::make_binary(t, a.min, b.max))),
                    simp(Max::make(internal::make_binary(t, a.max, b.min),
                                   internal::make_binary(t, a.max, b.max))));
}

Interval BoundsFinder::modulo(const Expr& e, const Interval& a, const Interval& b) {
    Type ty = e.type();
    bool floor = e.node_type() == IRNodeType::FloorMod;
    auto alo = lower(a.min), ahi = upper(a.max);
    auto c = b.is_single_point() ? as_const_int(b.min) : std::nullopt;
    if (c && *c > 0) {
        if (alo && ahi && internal::div_floor(*alo, *c) == internal::div_floor(*ahi, *c) &&
            (floor || *alo >= 0)) {
            if (*alo >= 0 && *ahi < *c) return a;  // keeps symbolic ends
            return Interval(make_const(ty, internal::mod_floor(*alo, *c)),
                            make_const(ty, internal::mod_floor(*ahi, *c)));
        }
        Expr top = make_const(ty, *c - 1);
        if (alo && *alo >= 0) {
            Expr hi = a.max.defined() ? simp(Min::make(a.max, top)) : top;
            return Interval(make_zero(ty), hi);
        }
        return Interval(floor ? make_zero(ty) : make_const(ty, 1 - *c), top);
    }
    if (c && *c < 0 && floor) return Interval(make_const(ty, *c + 1), make_zero(ty));
    auto blo = lower(b.min);
    if (floor && blo && *blo > 0 && b.max.defined()) {
        Expr top = simp(Sub::make(b.max, make_one(ty)));
        if (alo && *alo >= 0 && a.max.defined()) top = simp(Min::make(a.max, top));
        return Interval(make_zero(ty), top);
    }
    return type_range(ty);
}

Interval BoundsFinder::cast(const Cast* op) {
    Interval v = get(op->value);
    Type to = op->type, from = op->value.type();
    if (v.is_single_point()) return Interval::single_point(simp(Cast::make(to, v.min)));
    auto conv = [&](const Expr& x) { return x.defined() ? simp(Cast::make(to, x)) : Expr(); };
    bool monotone = internal::is_lossless_cast(from, to) || to.is_float() ||
                    (from.is_float() && to.is_int_or_uint());
    if (monotone && !to.is_bool()) {
        Interval r(conv(v.min), conv(v.max));
        if (!to.is_float()) {
            Interval range = type_range(to);
            if (!r.min.defined()) r.min = range.min;
            if (!r.max.defined()) r.max = range.max;
        }
        return r;
    }
    // Narrowing integer casts wrap: keep constant ends that fit.
    auto lo = as_const_int(v.min), hi = as_const_int(v.max);
    Interval range = type_range(to);
    if (lo && hi && to.is_int_or_uint() && *lo >= to.element_of().min_int() &&
        *hi <= to.element_of().max_int())
        return Interval(conv(v.min), conv(v.max));
    return range;
}

Interval BoundsFinder::call(const Call* op) {
    switch (op->op) {
        case Intrinsic::likely: return get(op->args[0]);
        case Intrinsic::if_then_else: return interval_union(get(op->args[1]), get(op->args[2]));
        case Intrinsic::swizzle: {
            // Each aligned block of vector * phases elements maps onto itself.
            Interval a = get(op->args[0]);
            auto lo = lower(a.min);
            if (!a.is_bounded() || !lo || *lo < 0) break;
            Expr block = make_const(op->type.element_of(),
                                    *as_const_int(op->args[1]) * *as_const_int(op->args[3]));
            return Interval(simp(FloorDiv::make(a.min, block) * block),
                            simp(FloorDiv::make(a.max, block) * block + block - 1));
        }
        case Intrinsic::abs: {
            if (!op->type.is_int()) break;
            Interval a = get(op->args[0]);
            if (auto lo = lower(a.min); lo && *lo >= 0) return a;
            if (a.is_bounded())
                return Interval(make_zero(op->type),
                                simp(Max::make(Sub::make(make_zero(op->type), a.min), a.max)));
            break;
        }
        default: break;
    }
    return type_range(op->type);
}

}  // namespace

Interval bounds_of(const Expr& e, const Scope& scope) {
    if (!e.defined()) return Interval::everything();
    return BoundsFinder(scope).get(e);
}

ConstInterval const_bounds_of(const Expr& e, const Scope& scope) {
    // Inner variables first, outer ones through the constant bounds of the resulting ends, so
    // that x - n with x in [0, n - 1] is [-n, -1] before n's own range applies.
    BoundsFinder f(scope, outer_variables(scope));
    Interval i = f.get(e);
    ConstInterval r;
    r.min = f.lower(i.min);
    r.max = f.upper(i.max);
    return r;
}

namespace {
std::optional<bool> prove_compare(const Expr& cond, const Scope& scope);

std::optional<bool> prove_rec(const Expr& cond, const Scope& scope, int depth) {
    if (auto v = as_const_int(cond)) return *v != 0;
    if (depth > 8) return std::nullopt;
    if (const auto* op = cond.as<And>()) {
        auto a = prove_rec(op->a, scope, depth + 1), b = prove_rec(op->b, scope, depth + 1);
        if (a && b) return *a && *b;
        if ((a && !*a) || (b && !*b)) return false;
        return std::nullopt;
    }
    if (const auto* op = cond.as<Or>()) {
        auto a = prove_rec(op->a, scope, depth + 1), b = prove_rec(op->b, scope, depth + 1);
        if ((a && *a) || (b && *b)) return true;
        if (a && b) return false;
        return std::nullopt;
    }
    if (const auto* op = cond.as<Not>()) {
        auto a = prove_rec(op->a, scope, depth + 1);
        if (a) return !*a;
        return std::nullopt;
    }
    return prove_compare(cond, scope);
}

// Decides a comparison from the bounds of a - b (index types) or of a and b (others).
std::optional<bool> prove_compare(const Expr& cond, const Scope& scope) {
    const Expr *pa, *pb;
    if (!internal::binary_operands(cond, &pa, &pb) || !cond.type().is_bool()) return std::nullopt;
    Expr a = *pa, b = *pb;
    IRNodeType op = cond.node_type();
    if (op == IRNodeType::GT || op == IRNodeType::GE) {
        std::swap(a, b);
        op = op == IRNodeType::GT ? IRNodeType::LT : IRNodeType::LE;
    }
    if (!a.type().is_int_or_uint()) return std::nullopt;
    ConstInterval d;
    ConstInterval x = const_bounds_of(a, scope), y = const_bounds_of(b, scope);
    if (x.min && y.max) d.min = internal::fit64(internal::int128(*x.min) - *y.max);
    if (x.max && y.min) d.max = internal::fit64(internal::int128(*x.max) - *y.min);
    // Bounds of the simplified a - b see through shared terms (x - n with x in [0, n - 1]),
    // but only when a - b cannot wrap in the type (the IR expression a - b would fold so).
    Type t = a.type();
    bool fits =
        d.min && d.max && *d.min >= internal::type_min128(t) && *d.max <= internal::type_max128(t);
    if (fits && internal::assumes_no_overflow(t)) {
        ConstInterval s = const_bounds_of(simplify(Sub::make(a, b)), scope);
        if (s.min && *s.min > *d.min) d.min = s.min;
        if (s.max && *s.max < *d.max) d.max = s.max;
    }
    auto lt0 = d.max && *d.max < 0, le0 = d.max && *d.max <= 0;
    auto ge0 = d.min && *d.min >= 0, gt0 = d.min && *d.min > 0;
    switch (op) {
        case IRNodeType::LT:
            if (lt0) return true;
            if (ge0) return false;
            break;
        case IRNodeType::LE:
            if (le0) return true;
            if (gt0) return false;
            break;
        case IRNodeType::EQ:
            if (d.min && d.max && *d.min == 0 && *d.max == 0) return true;
            if (lt0 || gt0) return false;
            break;
        case IRNodeType::NE:
            if (lt0 || gt0) return true;
            if (d.min && d.max && *d.min == 0 && *d.max == 0) return false;
            break;
        default: break;
    }
    return std::nullopt;
}
}  // namespace

bool can_prove(const Expr& cond, const Scope& scope) {
    if (!cond.defined()) return false;
    Analyzer an;
    for (int pass = 0; pass < 2; ++pass) {
        for (const auto& [v, i] : scope) an.bind(Var(v), i);
    }
    Expr c = an.simplify(cond);
    auto r = prove_rec(c, scope, 0);
    return r && *r;
}

}  // namespace tessel
