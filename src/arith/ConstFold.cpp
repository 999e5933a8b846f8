// Constant folding of every expression node, per ir/IR.h's semantics.
#include "ConstFold.h"

#include <cmath>

#include "ExprEqual.h"
#include "IntMath.h"
#include "tessel/ir/IRMutator.h"

namespace tessel::internal {

namespace {

bool is_const(const Expr& e) {
    return const_bits(e) || as_const_float(e);
}

// Integer ops: `a`, `b` are bit patterns of type t (ints wrap; uint64 read unsigned).
std::optional<int64_t> fold_int(IRNodeType op, Type t, int64_t a, int64_t b) {
    uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    bool u = t.is_uint();
    int128 va = const_value128(a, t), vb = const_value128(b, t);
    switch (op) {
        case IRNodeType::Add: return static_cast<int64_t>(ua + ub);
        case IRNodeType::Sub: return static_cast<int64_t>(ua - ub);
        case IRNodeType::Mul: return static_cast<int64_t>(ua * ub);
        case IRNodeType::Div:
        case IRNodeType::FloorDiv:
            if (u) return ub == 0 ? 0 : static_cast<int64_t>(ua / ub);
            return op == IRNodeType::Div ? div_trunc(a, b) : div_floor(a, b);
        case IRNodeType::Mod:
        case IRNodeType::FloorMod:
            if (u) return ub == 0 ? 0 : static_cast<int64_t>(ua % ub);
            return op == IRNodeType::Mod ? mod_trunc(a, b) : mod_floor(a, b);
        case IRNodeType::Min: return va <= vb ? a : b;
        case IRNodeType::Max: return va >= vb ? a : b;
        case IRNodeType::EQ: return va == vb;
        case IRNodeType::NE: return va != vb;
        case IRNodeType::LT: return va < vb;
        case IRNodeType::LE: return va <= vb;
        case IRNodeType::GT: return va > vb;
        case IRNodeType::GE: return va >= vb;
        case IRNodeType::And: return (a != 0) && (b != 0);
        case IRNodeType::Or: return (a != 0) || (b != 0);
        default: return std::nullopt;
    }
}

// Rounds an arithmetic result: float16/bfloat16 compute in float32 and round back (ir/IR.h).
double round_arith(double v, Type t) {
    if (t.bits < 64) v = static_cast<double>(static_cast<float>(v));
    return round_to_float_type(v, t);
}

Expr fold_float(IRNodeType op, Type t, double a, double b) {
    Type bt = Bool(t.lanes);
    switch (op) {
        case IRNodeType::Add: return make_const(t, round_arith(a + b, t));
        case IRNodeType::Sub: return make_const(t, round_arith(a - b, t));
        case IRNodeType::Mul: return make_const(t, round_arith(a * b, t));
        case IRNodeType::Div: return make_const(t, round_arith(a / b, t));
        case IRNodeType::Mod: return make_const(t, round_arith(std::fmod(a, b), t));
        case IRNodeType::FloorDiv: return make_const(t, std::floor(round_arith(a / b, t)));
        case IRNodeType::Min: return make_const(t, std::fmin(a, b));
        case IRNodeType::Max: return make_const(t, std::fmax(a, b));
        case IRNodeType::EQ: return make_const(bt, int64_t(a == b));
        case IRNodeType::NE: return make_const(bt, int64_t(a != b));
        case IRNodeType::LT: return make_const(bt, int64_t(a < b));
        case IRNodeType::LE: return make_const(bt, int64_t(a <= b));
        case IRNodeType::GT: return make_const(bt, int64_t(a > b));
        case IRNodeType::GE: return make_const(bt, int64_t(a >= b));
        default: return Expr();
    }
}

Expr fold_binary(const Expr& e, const Expr& a, const Expr& b) {
    if (!is_const(a) || !is_const(b)) return Expr();
    Type t = a.type();
    if (t.is_float()) return fold_float(e.node_type(), t, *as_const_float(a), *as_const_float(b));
    auto v = fold_int(e.node_type(), t, *const_bits(a), *const_bits(b));
    if (!v) return Expr();
    return make_const(e.type(), *v);
}

// Float to integer: truncate toward zero, saturate, NaN → 0.
int64_t float_to_int_bits(double v, Type to) {
    if (std::isnan(v)) return 0;
    double tv = std::trunc(v);
    if (to.is_uint() && to.bits == 64) {
        if (tv <= 0) return 0;
        if (tv >= 18446744073709551615.0) return -1;  // all ones
        return static_cast<int64_t>(static_cast<uint64_t>(tv));
    }
    double lo = static_cast<double>(to.min_int()), hi = static_cast<double>(to.max_int());
    if (tv <= lo) return to.min_int();
    if (tv >= hi) return to.max_int();
    return static_cast<int64_t>(tv);
}

Expr fold_cast(const Cast* op) {
    Type to = op->type, from = op->value.type();
    if (auto f = as_const_float(op->value)) {
        if (to.is_float()) return make_const(to, round_to_float_type(*f, to));
        if (to.is_bool()) return Expr();
        return make_const(to, float_to_int_bits(*f, to.element_of()));
    }
    auto bits = const_bits(op->value);
    if (!bits) return Expr();
    if (to.is_float()) {
        double d = (from.is_uint() && from.bits == 64)
                       ? static_cast<double>(static_cast<uint64_t>(*bits))
                       : static_cast<double>(*bits);
        if (to.bits == 32 && !to.is_bfloat()) {
            d = (from.is_uint() && from.bits == 64)
                    ? static_cast<double>(static_cast<float>(static_cast<uint64_t>(*bits)))
                    : static_cast<double>(static_cast<float>(*bits));
        }
        return make_const(to, round_to_float_type(d, to));
    }
    return make_const(to, wrap_to_int_type(*bits, to.element_of()));
}

Expr fold_call(const Call* op) {
    for (const Expr& a : op->args) {
        if (!is_const(a)) return Expr();
    }
    Type t = op->type;
    switch (op->op) {
        case Intrinsic::likely: return op->args[0];
        case Intrinsic::swizzle: {
            BufferSwizzle z{*as_const_int(op->args[1]), *as_const_int(op->args[2]),
                            *as_const_int(op->args[3])};
            auto o = as_const_int(op->args[0]);
            if (!o || *o < 0) return Expr();
            return make_const(t, z.apply(*o));
        }
        case Intrinsic::if_then_else: return *const_bits(op->args[0]) ? op->args[1] : op->args[2];
        case Intrinsic::abs:
            if (t.is_float()) return make_const(t, std::fabs(*as_const_float(op->args[0])));
            if (t.is_int()) {
                int64_t v = *const_bits(op->args[0]);
                return make_const(t,
                                  v < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(v)) : v);
            }
            return op->args[0];
        case Intrinsic::floor: return make_const(t, std::floor(*as_const_float(op->args[0])));
        case Intrinsic::ceil: return make_const(t, std::ceil(*as_const_float(op->args[0])));
        case Intrinsic::trunc: return make_const(t, std::trunc(*as_const_float(op->args[0])));
        case Intrinsic::round:  // round half to even, as the backends emit it
            return make_const(t, std::nearbyint(*as_const_float(op->args[0])));
        case Intrinsic::isnan:
            return make_const(t, int64_t(std::isnan(*as_const_float(op->args[0]))));
        default: return Expr();  // libm results are not folded: they may differ per target
    }
}

}  // namespace

Expr const_fold(const Expr& e) {
    const Expr *a, *b;
    if (binary_operands(e, &a, &b)) return fold_binary(e, *a, *b);
    switch (e.node_type()) {
        case IRNodeType::Not: {
            auto v = const_bits(e.as<Not>()->a);
            return v ? make_const(e.type(), int64_t(*v == 0)) : Expr();
        }
        case IRNodeType::Cast: return fold_cast(e.as<Cast>());
        case IRNodeType::Select: {
            const auto* op = e.as<Select>();
            auto c = const_bits(op->condition);
            if (!c) return Expr();
            return *c ? op->true_value : op->false_value;
        }
        case IRNodeType::Call: return fold_call(e.as<Call>());
        default: return Expr();
    }
}

namespace {
class FoldTree : public IRMutator {
public:
    using IRMutator::mutate;
    Expr mutate(const Expr& e) override {
        Expr r = IRMutator::mutate(e);
        if (!r.defined()) return r;
        Expr f = const_fold(r);
        return f.defined() ? f : r;
    }
};
}  // namespace

Expr const_fold_tree(const Expr& e) {
    return FoldTree().mutate(e);
}

bool is_lossless_cast(Type from, Type to) {
    if (from.is_bool()) return to.is_int_or_uint();
    if (!from.is_int_or_uint() || !to.is_int_or_uint()) return false;
    if (from.is_int() == to.is_int()) return to.bits >= from.bits;
    if (from.is_uint()) return to.bits > from.bits;  // uint → wider int
    return false;                                    // int → uint loses negatives
}

}  // namespace tessel::internal
