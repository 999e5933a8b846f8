// Modular analysis: the residue class { coeff*k + base } of integer expressions.
#include "tessel/arith/Modular.h"

#include "ConstFold.h"
#include "ExprEqual.h"
#include "IntMath.h"

namespace tessel {

using internal::gcd64;
using internal::int128;

ModularSet::ModularSet(int64_t c, int64_t b) {
    coeff = c < 0 ? -c : c;
    base = coeff > 0 ? internal::mod_floor(b, coeff) : b;
}

ModularSet modular_union(const ModularSet& a, const ModularSet& b) {
    int64_t diff = 0;
    auto d = internal::fit64(int128(a.base) - b.base);
    if (!d) return ModularSet::everything();
    diff = *d;
    int64_t g = gcd64(gcd64(a.coeff, b.coeff), diff);
    if (g == 0) return a;  // the same constant
    return ModularSet(g, a.base);
}

namespace {

ModularSet from128(int128 coeff, int128 base) {
    auto c = internal::fit64(coeff < 0 ? -coeff : coeff);
    if (!c) return ModularSet::everything();
    if (*c == 0) {
        auto b = internal::fit64(base);
        return b ? ModularSet::constant(*b) : ModularSet::everything();
    }
    int128 m = base % *c;
    if (m < 0) m += *c;
    return ModularSet(*c, static_cast<int64_t>(m));
}

int128 gcd128(int128 a, int128 b) {
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b != 0) {
        int128 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

class ModularFinder {
public:
    explicit ModularFinder(const ModularScope& scope) : scope_(scope) {}

    ModularSet get(const Expr& e) {
        ModularSet m = node(e);
        Type t = e.type();
        if (!t.is_int_or_uint() || internal::assumes_no_overflow(t) || m.is_constant()) return m;
        // Wrapping: only facts modulo a power of two dividing 2^bits survive.
        uint64_t c = static_cast<uint64_t>(m.coeff);
        uint64_t p = c & (~c + 1);  // largest power of two dividing coeff
        int cap = std::min<int>(t.bits, 62);
        if (p > (uint64_t(1) << cap)) p = uint64_t(1) << cap;
        return ModularSet(static_cast<int64_t>(p), m.base);
    }

private:
    ModularSet node(const Expr& e);
    ModularSet binary(const Expr& e, const ModularSet& a, const ModularSet& b);

    const ModularScope& scope_;
    ModularScope local_;
};

ModularSet ModularFinder::binary(const Expr& e, const ModularSet& a, const ModularSet& b) {
    switch (e.node_type()) {
        case IRNodeType::Add: return from128(gcd128(a.coeff, b.coeff), int128(a.base) + b.base);
        case IRNodeType::Sub: return from128(gcd128(a.coeff, b.coeff), int128(a.base) - b.base);
        case IRNodeType::Mul: {
            int128 g = gcd128(gcd128(int128(a.coeff) * b.coeff, int128(a.coeff) * b.base),
                              int128(b.coeff) * a.base);
            return from128(g, int128(a.base) * b.base);
        }
        case IRNodeType::FloorDiv:
        case IRNodeType::Div: {
            if (!b.is_constant() || b.base <= 0) break;
            int64_t c = b.base;
            bool exact = e.node_type() == IRNodeType::Div ? a.base == 0 : true;
            if (a.coeff % c == 0 && exact && a.coeff > 0)
                return ModularSet(a.coeff / c, internal::div_floor(a.base, c));
            break;
        }
        case IRNodeType::FloorMod: {
            if (!b.is_constant() || b.base <= 0) break;
            if (a.coeff % b.base == 0)  // includes a constant a (coeff 0)
                return ModularSet::constant(internal::mod_floor(a.base, b.base));
            return ModularSet(gcd64(a.coeff, b.base), a.base);
        }
        case IRNodeType::Mod: {
            if (!b.is_constant() || b.base <= 0) break;
            if (a.coeff > 0 && a.coeff % b.base == 0 && a.base % b.base == 0)
                return ModularSet::constant(0);
            break;
        }
        case IRNodeType::Min:
        case IRNodeType::Max: return modular_union(a, b);
        default: break;
    }
    return ModularSet::everything();
}

ModularSet ModularFinder::node(const Expr& e) {
    if (!e.type().is_int_or_uint()) return ModularSet::everything();
    if (auto c = as_const_int(e)) return ModularSet::constant(*c);
    if (const auto* v = e.as<Variable>()) {
        if (auto it = local_.find(v); it != local_.end()) return it->second;
        if (auto it = scope_.find(v); it != scope_.end()) return it->second;
        return ModularSet::everything();
    }
    const Expr *a, *b;
    if (internal::binary_operands(e, &a, &b)) return binary(e, get(*a), get(*b));
    switch (e.node_type()) {
        case IRNodeType::Select: {
            const auto* op = e.as<Select>();
            return modular_union(get(op->true_value), get(op->false_value));
        }
        case IRNodeType::Cast: {
            const auto* op = e.as<Cast>();
            if (internal::is_lossless_cast(op->value.type(), e.type())) return get(op->value);
            if (op->value.type().is_int_or_uint()) {
                // Truncation keeps residues modulo powers of two up to the target width.
                ModularSet m = get(op->value);
                uint64_t c = static_cast<uint64_t>(m.coeff);
                uint64_t p = c & (~c + 1);
                int cap = std::min<int>(e.type().bits, 62);
                if (m.is_constant() || p > (uint64_t(1) << cap)) p = uint64_t(1) << cap;
                return ModularSet(static_cast<int64_t>(p), m.base);
            }
            return ModularSet::everything();
        }
        case IRNodeType::Ramp: {
            const auto* op = e.as<Ramp>();
            ModularSet base = get(op->base), stride = get(op->stride);
            return from128(gcd128(gcd128(base.coeff, stride.coeff), stride.base), base.base);
        }
        case IRNodeType::Broadcast: return get(e.as<Broadcast>()->value);
        case IRNodeType::Let: {
            const auto* op = e.as<Let>();
            local_[op->var.get()] = get(op->value);
            return get(op->body);
        }
        case IRNodeType::Call: {
            const auto* op = e.as<Call>();
            if (op->op == Intrinsic::if_then_else)
                return modular_union(get(op->args[1]), get(op->args[2]));
            if (op->op == Intrinsic::swizzle) {  // keeps the residue modulo vector
                ModularSet a = get(op->args[0]);
                int64_t v = *as_const_int(op->args[1]);
                return ModularSet(a.coeff == 0 ? v : gcd64(a.coeff, v), a.base);
            }
            break;
        }
        default: break;
    }
    return ModularSet::everything();
}

}  // namespace

ModularSet modular_set_of(const Expr& e, const ModularScope& scope) {
    if (!e.defined()) return ModularSet::everything();
    return ModularFinder(scope).get(e);
}

}  // namespace tessel
