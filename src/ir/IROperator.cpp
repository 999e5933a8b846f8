#include "tessel/ir/IROperator.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace tessel {
namespace internal {

namespace {
bool is_literal(const Expr& e) {
    return e.as<IntImm>() || e.as<UIntImm>() || e.as<FloatImm>();
}

// Re-types a literal constant to `t`, or throws if the value cannot be represented.
Expr adapt_literal(const char* op_name, const Expr& lit, Type t) {
    Type et = t.element_of();
    Expr result;
    if (auto i = as_const_int(lit)) {
        if (et.is_float()) {
            result = make_const(et, static_cast<double>(*i));
        } else if (et.is_int_or_uint() && *i >= et.min_int() && *i <= et.max_int()) {
            result = make_const(et, *i);
        }
    } else if (auto f = as_const_float(lit)) {
        if (et.is_float()) result = make_const(et, *f);
    }
    if (!result.defined()) {
        TESSEL_THROW(DSLError) << op_name << ": the constant of type " << lit.type()
                               << " cannot be used as a " << et << " without an explicit cast";
    }
    return t.is_vector() ? Broadcast::make(result, t.lanes) : result;
}
}  // namespace

void match_types(const char* op_name, Expr* a, Expr* b) {
    if (!a->defined() || !b->defined())
        TESSEL_THROW(DSLError) << op_name << ": an operand is undefined";
    if (a->type() == b->type()) return;
    if (a->type().is_handle() || b->type().is_handle())
        TESSEL_THROW(DSLError) << op_name << ": cannot compute on a buffer handle";
    // Broadcast a scalar against a vector first.
    if (a->type().is_scalar() && b->type().is_vector()) {
        if (is_literal(*a)) {
            *a = adapt_literal(op_name, *a, b->type());
            return;
        }
        *a = Broadcast::make(*a, b->type().lanes);
    } else if (b->type().is_scalar() && a->type().is_vector()) {
        if (is_literal(*b)) {
            *b = adapt_literal(op_name, *b, a->type());
            return;
        }
        *b = Broadcast::make(*b, a->type().lanes);
    }
    if (a->type() == b->type()) return;
    if (a->type().lanes != b->type().lanes)
        TESSEL_THROW(DSLError) << op_name << ": operands have " << a->type().lanes << " and "
                               << b->type().lanes << " lanes";
    if (is_literal(*b) && !is_literal(*a)) {
        *b = adapt_literal(op_name, *b, a->type());
    } else if (is_literal(*a) && !is_literal(*b)) {
        *a = adapt_literal(op_name, *a, b->type());
    } else {
        TESSEL_THROW(DSLError) << op_name << ": mismatched types " << a->type() << " and "
                               << b->type() << "; insert an explicit cast";
    }
}

}  // namespace internal

namespace {
using internal::match_types;

void require_arith(const char* op_name, const Expr& a) {
    if (a.type().is_bool())
        TESSEL_THROW(DSLError) << op_name << ": arithmetic on bool; cast it to a number first";
}

void require_bool(const char* op_name, const Expr& a) {
    if (!a.defined() || !a.type().is_bool())
        TESSEL_THROW(DSLError) << op_name << ": expected a bool operand, got "
                               << (a.defined() ? a.type().str() : "undefined");
}

void require_nonzero_const(const char* op_name, const Expr& b) {
    if (b.type().is_int_or_uint() && is_zero(b))
        TESSEL_THROW(DSLError) << op_name << ": integer division by the constant zero";
}

template <typename Node>
Expr arith(const char* name, Expr a, Expr b) {
    match_types(name, &a, &b);
    require_arith(name, a);
    return Node::make(std::move(a), std::move(b));
}

template <typename Node>
Expr compare(const char* name, Expr a, Expr b) {
    match_types(name, &a, &b);
    return Node::make(std::move(a), std::move(b));
}
}  // namespace

Expr operator+(Expr a, Expr b) {
    return arith<Add>("+", std::move(a), std::move(b));
}
Expr operator-(Expr a, Expr b) {
    return arith<Sub>("-", std::move(a), std::move(b));
}
Expr operator*(Expr a, Expr b) {
    return arith<Mul>("*", std::move(a), std::move(b));
}
Expr operator/(Expr a, Expr b) {
    match_types("/", &a, &b);
    require_arith("/", a);
    require_nonzero_const("/", b);
    if (a.type().is_float()) return Div::make(std::move(a), std::move(b));
    return FloorDiv::make(std::move(a), std::move(b));
}
Expr operator%(Expr a, Expr b) {
    match_types("%", &a, &b);
    require_arith("%", a);
    if (a.type().is_float())
        TESSEL_THROW(DSLError) << "%: not defined on " << a.type() << "; use truncmod or floormod";
    require_nonzero_const("%", b);
    return FloorMod::make(std::move(a), std::move(b));
}
Expr operator-(Expr a) {
    if (!a.defined()) TESSEL_THROW(DSLError) << "unary -: operand is undefined";
    require_arith("unary -", a);
    if (auto i = as_const_int(a); i && a.type().is_int() && a.type().is_scalar())
        return make_const(a.type(), -*i);
    if (auto f = as_const_float(a); f && a.type().is_scalar()) return make_const(a.type(), -*f);
    return Sub::make(make_zero(a.type()), a);
}
Expr operator<(Expr a, Expr b) {
    return compare<LT>("<", std::move(a), std::move(b));
}
Expr operator<=(Expr a, Expr b) {
    return compare<LE>("<=", std::move(a), std::move(b));
}
Expr operator>(Expr a, Expr b) {
    return compare<GT>(">", std::move(a), std::move(b));
}
Expr operator>=(Expr a, Expr b) {
    return compare<GE>(">=", std::move(a), std::move(b));
}
Expr operator==(Expr a, Expr b) {
    return compare<EQ>("==", std::move(a), std::move(b));
}
Expr operator!=(Expr a, Expr b) {
    return compare<NE>("!=", std::move(a), std::move(b));
}
Expr operator&&(Expr a, Expr b) {
    require_bool("&&", a);
    require_bool("&&", b);
    match_types("&&", &a, &b);
    return And::make(std::move(a), std::move(b));
}
Expr operator||(Expr a, Expr b) {
    require_bool("||", a);
    require_bool("||", b);
    match_types("||", &a, &b);
    return Or::make(std::move(a), std::move(b));
}
Expr operator!(Expr a) {
    require_bool("!", a);
    return Not::make(std::move(a));
}

#define TESSEL_LITERAL_OPS(op)           \
    Expr operator op(Expr a, int b) {    \
        return std::move(a) op Expr(b);  \
    }                                    \
    Expr operator op(int a, Expr b) {    \
        return Expr(a) op std::move(b);  \
    }                                    \
    Expr operator op(Expr a, double b) { \
        return std::move(a) op Expr(b);  \
    }                                    \
    Expr operator op(double a, Expr b) { \
        return Expr(a) op std::move(b);  \
    }
TESSEL_LITERAL_OPS(+)
TESSEL_LITERAL_OPS(-)
TESSEL_LITERAL_OPS(*)
TESSEL_LITERAL_OPS(/)
TESSEL_LITERAL_OPS(%)
TESSEL_LITERAL_OPS(<)
TESSEL_LITERAL_OPS(<=)
TESSEL_LITERAL_OPS(>)
TESSEL_LITERAL_OPS(>=)
TESSEL_LITERAL_OPS(==)
TESSEL_LITERAL_OPS(!=)
#undef TESSEL_LITERAL_OPS

Expr min(Expr a, Expr b) {
    return arith<Min>("min", std::move(a), std::move(b));
}
Expr max(Expr a, Expr b) {
    return arith<Max>("max", std::move(a), std::move(b));
}
Expr floordiv(Expr a, Expr b) {
    match_types("floordiv", &a, &b);
    require_arith("floordiv", a);
    require_nonzero_const("floordiv", b);
    return FloorDiv::make(std::move(a), std::move(b));
}
Expr floormod(Expr a, Expr b) {
    match_types("floormod", &a, &b);
    require_arith("floormod", a);
    require_nonzero_const("floormod", b);
    return FloorMod::make(std::move(a), std::move(b));
}
Expr truncdiv(Expr a, Expr b) {
    match_types("truncdiv", &a, &b);
    require_arith("truncdiv", a);
    require_nonzero_const("truncdiv", b);
    return Div::make(std::move(a), std::move(b));
}
Expr truncmod(Expr a, Expr b) {
    match_types("truncmod", &a, &b);
    require_arith("truncmod", a);
    require_nonzero_const("truncmod", b);
    return Mod::make(std::move(a), std::move(b));
}

Expr select(Expr condition, Expr true_value, Expr false_value) {
    require_bool("select", condition);
    match_types("select", &true_value, &false_value);
    if (condition.type().lanes != 1 && condition.type().lanes != true_value.type().lanes)
        TESSEL_THROW(DSLError) << "select: condition has " << condition.type().lanes
                               << " lanes, values " << true_value.type().lanes;
    return Select::make(std::move(condition), std::move(true_value), std::move(false_value));
}

Expr if_then_else(Expr condition, Expr true_value, Expr false_value) {
    require_bool("if_then_else", condition);
    match_types("if_then_else", &true_value, &false_value);
    if (condition.type().lanes != 1 && condition.type().lanes != true_value.type().lanes)
        TESSEL_THROW(DSLError) << "if_then_else: condition has " << condition.type().lanes
                               << " lanes, values " << true_value.type().lanes;
    return Call::make(Intrinsic::if_then_else,
                      {std::move(condition), std::move(true_value), std::move(false_value)});
}

Expr cast(Type t, Expr value) {
    if (!value.defined()) TESSEL_THROW(DSLError) << "cast: operand is undefined";
    if (t.is_handle() || value.type().is_handle())
        TESSEL_THROW(DSLError) << "cast: cannot cast handles";
    if (t.is_scalar() && value.type().is_vector()) t = t.with_lanes(value.type().lanes);
    if (t.lanes != value.type().lanes)
        TESSEL_THROW(DSLError) << "cast: cannot cast " << value.type() << " to " << t;
    if (t == value.type()) return value;
    return Cast::make(t, std::move(value));
}

namespace {
Expr float_intrinsic(Intrinsic op, std::vector<Expr> args) {
    for (const Expr& a : args) {
        if (!a.defined()) TESSEL_THROW(DSLError) << intrinsic_name(op) << ": argument is undefined";
    }
    if (!args[0].type().is_float())
        TESSEL_THROW(DSLError) << intrinsic_name(op) << ": expects a float argument, got "
                               << args[0].type() << "; cast it first";
    for (size_t i = 1; i < args.size(); ++i) match_types(intrinsic_name(op), &args[0], &args[i]);
    return Call::make(op, std::move(args));
}
}  // namespace

Expr exp(Expr x) {
    return float_intrinsic(Intrinsic::exp, {std::move(x)});
}
Expr exp2(Expr x) {
    return float_intrinsic(Intrinsic::exp2, {std::move(x)});
}
Expr log(Expr x) {
    return float_intrinsic(Intrinsic::log, {std::move(x)});
}
Expr log2(Expr x) {
    return float_intrinsic(Intrinsic::log2, {std::move(x)});
}
Expr sqrt(Expr x) {
    return float_intrinsic(Intrinsic::sqrt, {std::move(x)});
}
Expr rsqrt(Expr x) {
    return float_intrinsic(Intrinsic::rsqrt, {std::move(x)});
}
Expr tanh(Expr x) {
    return float_intrinsic(Intrinsic::tanh, {std::move(x)});
}
Expr sigmoid(Expr x) {
    return float_intrinsic(Intrinsic::sigmoid, {std::move(x)});
}
Expr erf(Expr x) {
    return float_intrinsic(Intrinsic::erf, {std::move(x)});
}
Expr round_tf32(Expr x) {
    if (x.defined() && x.type().element_of() != Float(32))
        TESSEL_THROW(DSLError) << "round_tf32: expects a float32 argument, got " << x.type();
    return float_intrinsic(Intrinsic::round_tf32, {std::move(x)});
}
double round_to_tf32(double v) {
    float f = static_cast<float>(v);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;
    std::memcpy(&f, &u, 4);
    return f;
}
Expr sin(Expr x) {
    return float_intrinsic(Intrinsic::sin, {std::move(x)});
}
Expr cos(Expr x) {
    return float_intrinsic(Intrinsic::cos, {std::move(x)});
}
Expr pow(Expr x, Expr y) {
    return float_intrinsic(Intrinsic::pow, {std::move(x), std::move(y)});
}
Expr floor(Expr x) {
    return float_intrinsic(Intrinsic::floor, {std::move(x)});
}
Expr ceil(Expr x) {
    return float_intrinsic(Intrinsic::ceil, {std::move(x)});
}
Expr round(Expr x) {
    return float_intrinsic(Intrinsic::round, {std::move(x)});
}
Expr trunc(Expr x) {
    return float_intrinsic(Intrinsic::trunc, {std::move(x)});
}
Expr fma(Expr a, Expr b, Expr c) {
    return float_intrinsic(Intrinsic::fma, {std::move(a), std::move(b), std::move(c)});
}
Expr isnan(Expr x) {
    return float_intrinsic(Intrinsic::isnan, {std::move(x)});
}
Expr abs(Expr x) {
    if (!x.defined()) TESSEL_THROW(DSLError) << "abs: argument is undefined";
    require_arith("abs", x);
    if (x.type().is_uint()) return x;
    return Call::make(Intrinsic::abs, {std::move(x)});
}

Expr max_value(Type t) {
    if (t.is_float()) {
        double v = t.is_bfloat()  ? 3.3895313892515355e38
                   : t.bits == 16 ? 65504.0
                   : t.bits == 32 ? static_cast<double>(std::numeric_limits<float>::max())
                                  : std::numeric_limits<double>::max();
        return make_const(t, v);
    }
    if (t.is_uint() && t.bits == 64) {
        Expr u = UIntImm::make(t.element_of(), std::numeric_limits<uint64_t>::max());
        return t.is_vector() ? Broadcast::make(u, t.lanes) : u;
    }
    return make_const(t, t.element_of().max_int());
}

Expr min_value(Type t) {
    if (t.is_float()) return make_const(t, -*as_const_float(max_value(t)));
    return make_const(t, t.element_of().min_int());
}

Expr inf_value(Type t) {
    if (!t.is_float()) TESSEL_THROW(DSLError) << "inf_value: " << t << " has no infinity";
    return make_const(t, std::numeric_limits<double>::infinity());
}

}  // namespace tessel
