// Constant bounds of integer expressions, computed exactly on 128 bits.
#include <algorithm>

#include "ExprEqual.h"
#include "IntMath.h"
#include "Simplifier.h"

namespace tessel::internal {

namespace {

/// A closed interval of int128; nullopt ends are unbounded.
struct B {
    std::optional<int128> lo, hi;
    static B point(int128 v) { return {v, v}; }
    bool bounded() const { return lo && hi; }
};

B hull(const B& a, const B& b) {
    B r;
    if (a.lo && b.lo) r.lo = std::min(*a.lo, *b.lo);
    if (a.hi && b.hi) r.hi = std::max(*a.hi, *b.hi);
    return r;
}

B type_range(Type t) {
    if (t.is_bool()) return {int128(0), int128(1)};
    if (!t.is_int_or_uint()) return {};
    return {type_min128(t), type_max128(t)};
}

// Product, quotient ... over the corners of two bounded intervals.
template <typename F>
B corners(const B& a, const B& b, F f) {
    int128 v[4] = {f(*a.lo, *b.lo), f(*a.lo, *b.hi), f(*a.hi, *b.lo), f(*a.hi, *b.hi)};
    return {*std::min_element(v, v + 4), *std::max_element(v, v + 4)};
}

// Division-like ops: split the divisor around zero (x / 0 = 0 in the IR).
template <typename F>
B divide(const B& a, const B& b, F f) {
    if (!a.bounded() || !b.bounded()) return {};
    std::optional<B> r;
    auto add = [&](const B& part) { r = r ? hull(*r, part) : part; };
    if (*b.hi >= 1) add(corners(a, B{std::max<int128>(*b.lo, 1), *b.hi}, f));
    if (*b.lo <= -1) add(corners(a, B{*b.lo, std::min<int128>(*b.hi, -1)}, f));
    if (*b.lo <= 0 && *b.hi >= 0) add(B::point(0));
    return *r;
}

int128 tdiv(int128 a, int128 b) {
    return a / b;
}
int128 fdiv(int128 a, int128 b) {
    return div_floor128(a, b);
}

class Finder {
public:
    Finder(const ConstScope& scope, std::unordered_map<const ExprNode*, ConstInterval>* cache)
        : scope_(scope), cache_(cache) {}

    B bounds(const Expr& e) {
        Type t = e.type();
        if (t.is_float() || t.is_handle()) return {};
        bool cacheable = cache_ && local_.empty();
        if (cacheable) {
            auto it = cache_->find(e.get());
            if (it != cache_->end()) return from_const(it->second);
        }
        B r = clip(raw(e), t);
        if (cacheable) (*cache_)[e.get()] = to_const(r);
        return r;
    }

    static B from_const(const ConstInterval& c) {
        B r;
        if (c.min) r.lo = *c.min;
        if (c.max) r.hi = *c.max;
        return r;
    }
    static ConstInterval to_const(const B& b) {
        ConstInterval r;
        if (b.lo) r.min = fit64(*b.lo);
        if (b.hi) r.max = fit64(*b.hi);
        return r;
    }

    static B clip(B r, Type t) {
        // Anything outside the type's range may have wrapped anywhere. This holds for index
        // types too: the simplifier reassociates sums, so an intermediate of a simplified
        // expression may wrap even where the original expression did not overflow.
        B range = type_range(t);
        if (!r.bounded() || *r.lo < *range.lo || *r.hi > *range.hi) return range;
        return r;
    }

private:
    B raw(const Expr& e);
    B binary(const Expr& e, const Expr& a, const Expr& b);

    const ConstScope& scope_;
    std::unordered_map<const ExprNode*, ConstInterval>* cache_;
    ConstScope local_;
};

B Finder::binary(const Expr& e, const Expr& ea, const Expr& eb) {
    B a = bounds(ea), b = bounds(eb);
    auto both = a.bounded() && b.bounded();
    switch (e.node_type()) {
        case IRNodeType::Add:
            return {a.lo && b.lo ? std::optional<int128>(*a.lo + *b.lo) : std::nullopt,
                    a.hi && b.hi ? std::optional<int128>(*a.hi + *b.hi) : std::nullopt};
        case IRNodeType::Sub:
            return {a.lo && b.hi ? std::optional<int128>(*a.lo - *b.hi) : std::nullopt,
                    a.hi && b.lo ? std::optional<int128>(*a.hi - *b.lo) : std::nullopt};
        case IRNodeType::Mul:
            if (!both) return {};
            return corners(a, b, [](int128 x, int128 y) { return x * y; });
        case IRNodeType::Div: return divide(a, b, tdiv);
        case IRNodeType::FloorDiv: return divide(a, b, fdiv);
        case IRNodeType::FloorMod: {
            if (!b.bounded()) return {};
            if (b.lo == b.hi && *b.lo > 0 && a.bounded() &&
                div_floor128(*a.lo, *b.lo) == div_floor128(*a.hi, *b.lo)) {
                int128 q = div_floor128(*a.lo, *b.lo) * *b.lo;
                return {*a.lo - q, *a.hi - q};
            }
            B r{std::min<int128>(0, *b.lo + 1), std::max<int128>(0, *b.hi - 1)};
            if (*b.lo > 0 && a.lo && *a.lo >= 0 && a.hi) r.hi = std::min(*r.hi, *a.hi);
            return r;
        }
        case IRNodeType::Mod: {
            if (!b.bounded()) return {};
            int128 m = std::max(*b.lo < 0 ? -*b.lo : *b.lo, *b.hi < 0 ? -*b.hi : *b.hi);
            if (m == 0) return B::point(0);
            B r{-(m - 1), m - 1};
            if (a.lo && *a.lo >= 0) r = {int128(0), a.hi ? std::min(*a.hi, m - 1) : m - 1};
            if (a.hi && *a.hi <= 0) r = {a.lo ? std::max(*a.lo, -(m - 1)) : -(m - 1), int128(0)};
            return r;
        }
        case IRNodeType::Min:
            return {a.lo && b.lo ? std::optional<int128>(std::min(*a.lo, *b.lo)) : std::nullopt,
                    a.hi ? (b.hi ? std::optional<int128>(std::min(*a.hi, *b.hi)) : a.hi) : b.hi};
        case IRNodeType::Max:
            return {a.lo ? (b.lo ? std::optional<int128>(std::max(*a.lo, *b.lo)) : a.lo) : b.lo,
                    a.hi && b.hi ? std::optional<int128>(std::max(*a.hi, *b.hi)) : std::nullopt};
        default: return type_range(e.type());  // comparisons, And, Or: bool
    }
}

B Finder::raw(const Expr& e) {
    if (auto c = const_bits(e)) return B::point(const_value128(*c, e.type()));
    if (const auto* v = e.as<Variable>()) {
        const ConstInterval* ci = nullptr;
        if (auto it = local_.find(v); it != local_.end())
            ci = &it->second;
        else if (auto it2 = scope_.find(v); it2 != scope_.end())
            ci = &it2->second;
        if (!ci) return type_range(e.type());
        B r;
        if (ci->min) r.lo = *ci->min;
        if (ci->max) r.hi = *ci->max;
        return r;
    }
    const Expr *a, *b;
    if (binary_operands(e, &a, &b)) return binary(e, *a, *b);
    switch (e.node_type()) {
        case IRNodeType::Cast: {
            const auto* op = e.as<Cast>();
            B range = type_range(e.type());
            if (op->value.type().is_float() || e.type().is_bool()) return range;
            B v = bounds(op->value);  // kept only if no value wraps in the target type
            if (!v.bounded() || *v.lo < *range.lo || *v.hi > *range.hi) return range;
            return v;
        }
        case IRNodeType::Select: {
            const auto* op = e.as<Select>();
            return hull(bounds(op->true_value), bounds(op->false_value));
        }
        case IRNodeType::Ramp: {
            const auto* op = e.as<Ramp>();
            B base = bounds(op->base), s = bounds(op->stride);
            if (!base.bounded() || !s.bounded()) return {};
            B last = corners(s, B::point(op->lanes - 1), [](int128 x, int128 y) { return x * y; });
            return {*base.lo + std::min<int128>(0, *last.lo),
                    *base.hi + std::max<int128>(0, *last.hi)};
        }
        case IRNodeType::Broadcast: return bounds(e.as<Broadcast>()->value);
        case IRNodeType::Let: {
            const auto* op = e.as<Let>();
            B v = bounds(op->value);
            ConstInterval ci;
            if (v.lo) ci.min = fit64(*v.lo);
            if (v.hi) ci.max = fit64(*v.hi);
            local_[op->var.get()] = ci;
            return bounds(op->body);
        }
        case IRNodeType::Call: {
            const auto* op = e.as<Call>();
            if (op->op == Intrinsic::if_then_else)
                return hull(bounds(op->args[1]), bounds(op->args[2]));
            if (op->op == Intrinsic::swizzle) {  // aligned blocks of vector * phases map to
                B x = bounds(op->args[0]);       // themselves
                if (!x.bounded() || *x.lo < 0) return type_range(e.type());
                int128 block = int128(*as_const_int(op->args[1])) * *as_const_int(op->args[3]);
                return {*x.lo / block * block, *x.hi / block * block + block - 1};
            }
            if (op->op == Intrinsic::abs && e.type().is_int()) {
                B x = bounds(op->args[0]);
                if (!x.bounded()) return {};
                if (*x.lo >= 0) return x;
                return {int128(0), std::max(-*x.lo, *x.hi)};
            }
            return type_range(e.type());
        }
        default: return type_range(e.type());
    }
}

}  // namespace

ConstInterval find_const_bounds(const Expr& e, const ConstScope& scope,
                                std::unordered_map<const ExprNode*, ConstInterval>* cache) {
    return Finder::to_const(Finder(scope, cache).bounds(e));
}

}  // namespace tessel::internal
