// CUDA C printing of expressions (see CodeGenCUDAImpl.h). Semantics follow ir/IR.h exactly, as
// the loop-IR interpreter computes them: wrapping integer arithmetic (except in index arithmetic,
// which never overflows), guarded integer division, saturating float-to-int casts, float16 and
// bfloat16 rounded after every operation, lazy if_then_else.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "codegen/cuda/CodeGenCUDAImpl.h"
#include "tessel/Error.h"
#include "tessel/ir/IROperator.h"

namespace tessel::internal {

namespace {

bool is_half(Type t) {
    return t.is_float() && t.bits == 16;
}

// The C type arithmetic on integer type t happens in without undefined overflow.
std::string unsigned_of(Type t) {
    return t.bits == 64 ? "unsigned long long" : "unsigned";
}

std::string paren(const std::string& s) {
    return "(" + s + ")";
}

}  // namespace

std::string CodeGenCUDA::value_type(Type t) {
    switch (t.code) {
        case TypeCode::Bool: return "bool";
        case TypeCode::Int:
            return t.bits == 8    ? "signed char"
                   : t.bits == 16 ? "short"
                   : t.bits == 32 ? "int"
                                  : "long long";
        case TypeCode::UInt:
            return t.bits == 8    ? "unsigned char"
                   : t.bits == 16 ? "unsigned short"
                   : t.bits == 32 ? "unsigned"
                                  : "unsigned long long";
        case TypeCode::Float: return t.bits == 64 ? "double" : "float";
        case TypeCode::BFloat: return "float";
        case TypeCode::Handle: break;
    }
    TESSEL_THROW(CompileError) << "cuda: a value of type " << t << " has no CUDA C type";
}

std::string CodeGenCUDA::memory_type(Type t) {
    if (t.is_bool()) return "unsigned char";
    if (is_half(t)) return "unsigned short";
    return value_type(t);
}

std::string CodeGenCUDA::to_memory(const std::string& v, Type t) {
    if (t.is_bool()) return "(unsigned char)" + paren(v);
    if (t.is_bfloat()) return "tsl_f2b" + paren(v);
    if (is_half(t)) return "tsl_f2h" + paren(v);
    return v;
}

std::string CodeGenCUDA::from_memory(const std::string& v, Type t) {
    if (t.is_bool()) return paren(v + " != 0");
    if (t.is_bfloat()) return "tsl_b2f" + paren(v);
    if (is_half(t)) return "tsl_h2f" + paren(v);
    return v;
}

std::string CodeGenCUDA::zero_of(Type t) {
    if (t.is_bool()) return "false";
    if (t.is_float()) return t.bits == 64 ? "0.0" : "0.0f";
    return paren(value_type(t) + ")(0");
}

// A float32 value rounded to float16/bfloat16 (identity for wider types).
std::string CodeGenCUDA::round_to(Type t, const std::string& v) {
    if (t.is_bfloat()) return "tsl_rb" + paren(v);
    if (is_half(t)) return "tsl_rh" + paren(v);
    return v;
}

std::string CodeGenCUDA::index_expr(const Expr& e, int lane) {
    ++index_depth_;
    std::string s = expr(e, lane);
    --index_depth_;
    return s;
}

std::string CodeGenCUDA::expr(const Expr& e, int lane) {
    TESSEL_CHECK(e.defined()) << "cuda codegen of an undefined expression";
    Type t = e.type();
    switch (e.node_type()) {
        case IRNodeType::IntImm:
        case IRNodeType::UIntImm:
        case IRNodeType::FloatImm: return constant(e);
        case IRNodeType::Variable: return variable(e.as<Variable>(), lane);
        case IRNodeType::Cast: return cast(t, e.as<Cast>()->value, lane);
#define TESSEL_BINARY_CASE(T) \
    case IRNodeType::T: return binary(IRNodeType::T, e.as<T>()->a, e.as<T>()->b, t, lane);
            TESSEL_BINARY_CASE(Add)
            TESSEL_BINARY_CASE(Sub)
            TESSEL_BINARY_CASE(Mul)
            TESSEL_BINARY_CASE(Div)
            TESSEL_BINARY_CASE(Mod)
            TESSEL_BINARY_CASE(FloorDiv)
            TESSEL_BINARY_CASE(FloorMod)
            TESSEL_BINARY_CASE(Min)
            TESSEL_BINARY_CASE(Max)
#undef TESSEL_BINARY_CASE
#define TESSEL_COMPARE_CASE(T) \
    case IRNodeType::T: return compare(IRNodeType::T, e.as<T>()->a, e.as<T>()->b, lane);
            TESSEL_COMPARE_CASE(EQ)
            TESSEL_COMPARE_CASE(NE)
            TESSEL_COMPARE_CASE(LT)
            TESSEL_COMPARE_CASE(LE)
            TESSEL_COMPARE_CASE(GT)
            TESSEL_COMPARE_CASE(GE)
#undef TESSEL_COMPARE_CASE
        case IRNodeType::And:
            return paren(expr(e.as<And>()->a, lane) + " && " + expr(e.as<And>()->b, lane));
        case IRNodeType::Or:
            return paren(expr(e.as<Or>()->a, lane) + " || " + expr(e.as<Or>()->b, lane));
        case IRNodeType::Not: return paren("!" + expr(e.as<Not>()->a, lane));
        case IRNodeType::Select: {
            const Select* op = e.as<Select>();
            int c_lane = op->condition.type().is_vector() ? lane : 0;
            return paren(expr(op->condition, c_lane) + " ? " + expr(op->true_value, lane) + " : " +
                         expr(op->false_value, lane));
        }
        case IRNodeType::Ramp: {
            const Ramp* op = e.as<Ramp>();
            if (lane == 0) return expr(op->base);
            // Index arithmetic: base + lane * stride does not overflow.
            ++index_depth_;
            Expr lane_index = make_const(op->stride.type(), int64_t(lane));
            std::string offset =
                as_const_int(op->stride)
                    ? constant(make_const(op->stride.type(), *as_const_int(op->stride) * lane))
                    : paren(expr(op->stride) + " * " + constant(lane_index));
            std::string r = paren(expr(op->base) + " + " + offset);
            --index_depth_;
            return r;
        }
        case IRNodeType::Broadcast: return expr(e.as<Broadcast>()->value, 0);
        case IRNodeType::Let: return let(e.as<Let>(), lane);
        case IRNodeType::Call: return call(e.as<Call>(), lane);
        case IRNodeType::Load: return load(e.as<Load>(), lane);
        default:
            TESSEL_THROW(CompileError) << "cuda: " << node_type_name(e.node_type())
                                       << " must be lowered away before code generation";
    }
}

std::string CodeGenCUDA::constant(const Expr& e) {
    Type t = e.type();
    char buf[64];
    if (const IntImm* op = e.as<IntImm>()) {
        int64_t v = op->value;
        if (t.bits == 64) {
            if (v == INT64_MIN) return "(-9223372036854775807LL - 1LL)";
            std::snprintf(buf, sizeof buf, "%" PRId64 "LL", v);
        } else if (v == INT32_MIN) {
            return "(-2147483647 - 1)";
        } else {
            std::snprintf(buf, sizeof buf, "%" PRId64, v);
        }
        std::string s = v < 0 ? paren(buf) : std::string(buf);
        return t.bits < 32 ? paren("(" + value_type(t) + ")" + s) : s;
    }
    if (const UIntImm* op = e.as<UIntImm>()) {
        if (t.is_bool()) return op->value ? "true" : "false";
        std::snprintf(buf, sizeof buf, "%" PRIu64 "%s", op->value, t.bits == 64 ? "ull" : "u");
        return t.bits < 32 ? paren("(" + value_type(t) + ")" + buf) : std::string(buf);
    }
    const FloatImm* op = e.as<FloatImm>();
    TESSEL_CHECK(op) << "cuda: constant of a " << node_type_name(e.node_type());
    double v = op->value;
    bool dbl = t.bits == 64;
    if (std::isnan(v))
        return dbl ? "__longlong_as_double(0x7ff8000000000000LL)" : "__uint_as_float(0x7fc00000u)";
    if (std::isinf(v)) {
        std::string inf =
            dbl ? "__longlong_as_double(0x7ff0000000000000LL)" : "__uint_as_float(0x7f800000u)";
        return v < 0 ? paren("-" + inf) : inf;
    }
    // Shortest decimal that reads back exactly; values of 16-bit types are floats.
    for (int digits = dbl ? 15 : 6; digits <= 17; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, v);
        double back = std::strtod(buf, nullptr);
        if (dbl ? back == v : static_cast<float>(back) == static_cast<float>(v)) break;
    }
    std::string s = buf;
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    if (!dbl) s += "f";
    return v < 0 || std::signbit(v) ? paren(s) : s;
}

std::string CodeGenCUDA::variable(const Variable* v, int lane) {
    auto it = lane_names_.find(v);
    return it != lane_names_.end() ? it->second[lane] : name_of(v);
}

// Casts (ir/IR.h): integers truncate or extend by the source's signedness; float to integer
// truncates toward zero and saturates, NaN to 0 (cvt.rzi does exactly that); to float16/bfloat16
// through float32 (as the interpreter rounds: double to float, then to the 16-bit type).
std::string CodeGenCUDA::cast(Type to, const Expr& value, int lane) {
    Type from = value.type().element_of();
    to = to.element_of();
    std::string v = expr(value, value.type().is_vector() ? lane : 0);
    if (from == to) return v;
    if (to.is_bool()) return paren(v + (from.is_float() ? " != 0.0f" : " != 0"));
    if (to.is_float()) {
        if (from.is_float()) {
            if (to.bits == 64) return "(double)" + paren(v);
            if (to.bits == 32) return from.bits == 64 ? "(float)" + paren(v) : v;
            return round_to(to, from.bits == 64 ? "(float)" + paren(v) : v);
        }
        std::string d = from.bits == 64 ? "(double)" + paren(v) : v;  // int64 → double → float
        if (to.bits == 64) return "(double)" + paren(v);
        return round_to(to, "(float)" + paren(d));
    }
    if (from.is_float()) {
        const char* src = from.bits == 64 ? "__double2" : "__float2";
        if (to.bits == 64) return src + std::string(to.is_int() ? "ll" : "ull") + "_rz" + paren(v);
        if (to.is_int()) {
            std::string i = src + std::string("int_rz") + paren(v);
            if (to.bits == 32) return i;
            std::string lim = to.bits == 8 ? "-128, 127" : "-32768, 32767";
            return paren("(" + value_type(to) + ")tsl_clamp(" + i + ", " + lim + ")");
        }
        std::string u = src + std::string("uint_rz") + paren(v);
        if (to.bits == 32) return u;
        std::string lim = to.bits == 8 ? "255u" : "65535u";
        return paren("(" + value_type(to) + ")tsl_uclamp(" + u + ", " + lim + ")");
    }
    return paren("(" + value_type(to) + ")" + paren(v));
}

std::string CodeGenCUDA::binary(IRNodeType op, const Expr& a, const Expr& b, Type t, int lane) {
    if (!t.is_float()) return int_binary(op, a, b, t, lane);
    std::string r = float_binary(op, expr(a, lane), expr(b, lane), t);
    return round_to(t, r);
}

std::string CodeGenCUDA::float_binary(IRNodeType op, const std::string& a, const std::string& b,
                                      Type t) {
    bool dbl = t.bits == 64;
    switch (op) {
        case IRNodeType::Add: return paren(a + " + " + b);
        case IRNodeType::Sub: return paren(a + " - " + b);
        case IRNodeType::Mul: return paren(a + " * " + b);
        case IRNodeType::Div:
            if (options_.fast_math && !dbl) return "__fdividef(" + a + ", " + b + ")";
            return paren(a + " / " + b);
        case IRNodeType::Mod: return (dbl ? "fmod(" : "fmodf(") + a + ", " + b + ")";
        case IRNodeType::FloorDiv: {
            // floor of the quotient rounded to t (the interpreter rounds before the floor).
            std::string q = round_to(t, paren(a + " / " + b));
            return (dbl ? "floor(" : "floorf(") + q + ")";
        }
        case IRNodeType::FloorMod: {
            // a - b * floor(a / b), computed in double and rounded once, as the interpreter does.
            std::string q = round_to(t, paren(a + " / " + b));
            if (dbl) return paren(a + " - " + b + " * floor(" + q + ")");
            return "(float)((double)" + a + " - (double)" + b + " * (double)floorf(" + q + "))";
        }
        case IRNodeType::Min: return (dbl ? "fmin(" : "fminf(") + a + ", " + b + ")";
        case IRNodeType::Max: return (dbl ? "fmax(" : "fmaxf(") + a + ", " + b + ")";
        default: TESSEL_CHECK(false) << "cuda: float " << node_type_name(op);
    }
    return "";
}

// Add, Sub and Mul wrap (ir/IR.h): value arithmetic goes through the unsigned type, where C
// defines overflow; index arithmetic never overflows and stays plain, so that nvcc may optimise.
std::string CodeGenCUDA::int_binary(IRNodeType op, const Expr& a, const Expr& b, Type t, int lane) {
    if (op == IRNodeType::Div || op == IRNodeType::Mod || op == IRNodeType::FloorDiv ||
        op == IRNodeType::FloorMod)
        return int_division(op, a, b, t, lane);
    std::string x = expr(a, lane), y = expr(b, lane);
    std::string ty = value_type(t);
    if (op == IRNodeType::Min) return "tsl_min<" + ty + ">(" + x + ", " + y + ")";
    if (op == IRNodeType::Max) return "tsl_max<" + ty + ">(" + x + ", " + y + ")";
    const char* sym = op == IRNodeType::Add ? " + " : op == IRNodeType::Sub ? " - " : " * ";
    TESSEL_CHECK(op == IRNodeType::Add || op == IRNodeType::Sub || op == IRNodeType::Mul)
        << "cuda: integer " << node_type_name(op);
    if (index_depth_ > 0 && t.is_int() && t.bits >= 32) return paren(x + sym + y);
    std::string u = unsigned_of(t);
    return paren("(" + ty + ")((" + u + ")" + x + sym + "(" + u + ")" + y + ")");
}

// Division by a positive constant of a provably non-negative dividend is plain C division (all
// four nodes agree there); everything else goes through the guarded helpers of the prelude.
std::string CodeGenCUDA::int_division(IRNodeType op, const Expr& a, const Expr& b, Type t,
                                      int lane) {
    std::string x = expr(a, lane), y = expr(b, lane);
    bool is_div = op == IRNodeType::Div || op == IRNodeType::FloorDiv;
    auto c = as_const_int(b);
    bool plain =
        c && *c > 0 &&
        (t.is_uint() ||
         can_prove(a.type().is_vector() ? a >= make_zero(a.type()) : a >= make_zero(t), bounds_));
    if (plain) return paren(x + (is_div ? " / " : " % ") + y);
    static const char* const names[] = {"tsl_div", "tsl_mod", "tsl_floordiv", "tsl_floormod"};
    int i = op == IRNodeType::Div        ? 0
            : op == IRNodeType::Mod      ? 1
            : op == IRNodeType::FloorDiv ? 2
                                         : 3;
    // Narrow types compute in int/unsigned: the quotient fits, and the cast back wraps.
    std::string wide = t.bits == 64 ? value_type(t) : t.is_int() ? "int" : "unsigned";
    std::string r = std::string(names[i]) + "((" + wide + ")" + x + ", (" + wide + ")" + y + ")";
    return t.bits < 32 ? paren("(" + value_type(t) + ")" + r) : r;
}

std::string CodeGenCUDA::compare(IRNodeType op, const Expr& a, const Expr& b, int lane) {
    static const char* const syms[] = {" == ", " != ", " < ", " <= ", " > ", " >= "};
    int i = static_cast<int>(op) - static_cast<int>(IRNodeType::EQ);
    return paren(expr(a, lane) + syms[i] + expr(b, lane));
}

// `let x = v in body`: a lambda keeps x local to the expression (and to the lane).
std::string CodeGenCUDA::let(const Let* op, int lane) {
    std::string n = name_of(op->var.get());
    std::string v = expr(op->value, op->value.type().is_vector() ? lane : 0);
    auto split = lane_names_.extract(op->var.get());  // the lambda binds this lane only
    bounds_[op->var.get()] = bounds_of(op->value, bounds_);
    modular_[op->var.get()] = modular_set_of(op->value, modular_);
    ++lazy_depth_;
    std::string body = expr(op->body, lane);
    --lazy_depth_;
    if (!split.empty()) lane_names_.insert(std::move(split));
    return "([&]() { const " + value_type(op->value.type()) + " " + n + " = " + v + "; return " +
           body + "; }())";
}

std::string CodeGenCUDA::call(const Call* op, int lane) {
    auto arg = [&](int i) {
        const Expr& a = op->args[i];
        return expr(a, a.type().is_vector() ? lane : 0);
    };
    switch (op->op) {
        case Intrinsic::likely: return arg(0);
        case Intrinsic::swizzle: {
            const bool wide = op->type.bits > 32;
            std::string x = wide ? "(long long)" + arg(0) : "(int)" + arg(0);
            auto c = [&](int i) {
                return std::to_string(*as_const_int(op->args[i])) + (wide ? "ull" : "u");
            };
            return "tsl_swizzle(" + x + ", " + c(1) + ", " + c(2) + ", " + c(3) + ")";
        }
        case Intrinsic::if_then_else: {
            std::string c = arg(0);
            ++lazy_depth_;
            std::string r = paren(c + " ? " + arg(1) + " : " + arg(2));
            --lazy_depth_;
            return r;
        }
        case Intrinsic::isnan: {
            std::string x = arg(0);
            return op->args[0].type().is_float() ? paren(x + " != " + x) : "false";
        }
        case Intrinsic::abs:
            if (!op->type.is_float()) {
                if (!op->type.is_int()) return arg(0);
                // Wrapping negation: abs(INT_MIN) == INT_MIN.
                std::string ty = value_type(op->type), u = unsigned_of(op->type);
                std::string x = arg(0);
                return paren(x + " < 0 ? (" + ty + ")((" + u + ")0 - (" + u + ")" + x + ") : " + x);
            }
            break;
        default:
            if (is_statement_intrinsic(op->op))
                TESSEL_THROW(CompileError) << "cuda: " << intrinsic_name(op->op)
                                           << " is only valid as a statement of its own";
            break;
    }
    return round_to(op->type, float_math(op, lane));
}

std::string CodeGenCUDA::float_math(const Call* op, int lane) {
    Type t = op->type.element_of();
    bool dbl = t.bits == 64, fast = options_.fast_math && !dbl;
    std::vector<std::string> a;
    for (const Expr& x : op->args) a.push_back(expr(x, x.type().is_vector() ? lane : 0));
    auto fn = [&](const char* name) {
        std::string s = std::string(name) + (dbl ? "" : "f") + "(" + a[0];
        for (size_t i = 1; i < a.size(); ++i) s += ", " + a[i];
        return s + ")";
    };
    switch (op->op) {
        case Intrinsic::exp: return fast ? "__expf(" + a[0] + ")" : fn("exp");
        case Intrinsic::exp2: return fn("exp2");
        case Intrinsic::log: return fast ? "__logf(" + a[0] + ")" : fn("log");
        case Intrinsic::log2: return fast ? "__log2f(" + a[0] + ")" : fn("log2");
        case Intrinsic::sqrt: return fn("sqrt");
        case Intrinsic::rsqrt: return fast ? "rsqrtf(" + a[0] + ")" : fn("rsqrt");
        case Intrinsic::tanh: return fn("tanh");
        case Intrinsic::sigmoid: {
            std::string e =
                fast ? "__expf(-" + a[0] + ")" : (dbl ? "exp(-" : "expf(-") + a[0] + ")";
            std::string one = dbl ? "1.0" : "1.0f";
            return paren(one + " / (" + one + " + " + e + ")");
        }
        case Intrinsic::erf: return fn("erf");
        case Intrinsic::sin: return fast ? "__sinf(" + a[0] + ")" : fn("sin");
        case Intrinsic::cos: return fast ? "__cosf(" + a[0] + ")" : fn("cos");
        case Intrinsic::pow: return fast ? "__powf(" + a[0] + ", " + a[1] + ")" : fn("pow");
        case Intrinsic::abs: return fn("fabs");
        case Intrinsic::floor: return fn("floor");
        case Intrinsic::ceil: return fn("ceil");
        case Intrinsic::round: return fn("rint");  // nearest even, as nearbyint
        case Intrinsic::trunc: return fn("trunc");
        case Intrinsic::fma: return fn("fma");
        case Intrinsic::round_tf32: return "tsl_round_tf32(" + a[0] + ")";
        default: break;
    }
    TESSEL_THROW(CompileError) << "cuda: intrinsic " << intrinsic_name(op->op) << " on " << t
                               << " is not supported";
}

// A dense access of 2 or 4 lanes of a 32-bit type at a proven multiple of the lane count, into
// memory aligned to the vector (a kernel argument then records the alignment it needs).
bool CodeGenCUDA::dense_vector_access(const Var& buffer, const Expr& index, const Expr& predicate,
                                      Type t) {
    const Ramp* ramp = index.as<Ramp>();
    if (!ramp || !is_one(ramp->stride) || (t.lanes != 2 && t.lanes != 4) || t.bits != 32)
        return false;
    if (t.is_bool() || t.is_bfloat()) return false;
    if (predicate.defined() && !is_one(predicate)) return false;
    return multiple_of(ramp->base, t.lanes) && aligned_to(buffer.get(), 4 * t.lanes);
}

bool CodeGenCUDA::multiple_of(const Expr& index, int64_t n) const {
    ModularSet m = modular_set_of(index, modular_);
    return m.coeff % n == 0 && m.base % n == 0;
}

// A buffer the kernel knows, its start aligned to `bytes`: arrays the kernel allocates are
// (16 bytes), an argument records the alignment the code now assumes (checked at the call).
bool CodeGenCUDA::aligned_to(const Variable* buffer, int64_t bytes) {
    auto it = buffers_.find(buffer);
    if (it == buffers_.end()) return false;
    if (it->second.param >= 0 && it->second.param < static_cast<int>(f_.args.size())) {
        int64_t& align = arg_alignment_[it->second.param];
        align = std::max<int64_t>(align, bytes);
    }
    return true;
}

// A dense vector of 16-bit values (float16, bfloat16) of 8 or 16 bytes at a multiple of its size:
// copied as raw bits (uint2, uint4), without the float32 round trip of its lanes.
bool CodeGenCUDA::dense_bits(const Var& buffer, const Expr& index, const Expr& predicate, Type t) {
    const Ramp* ramp = index.as<Ramp>();
    if (!ramp || !is_one(ramp->stride) || (t.lanes != 4 && t.lanes != 8) || t.bits != 16)
        return false;
    if (predicate.defined() && !is_one(predicate)) return false;
    return multiple_of(ramp->base, t.lanes) && aligned_to(buffer.get(), 2 * t.lanes);
}

std::string CodeGenCUDA::load(const Load* op, int lane) {
    Type t = op->type;
    std::string buf = name_of(op->buffer_var.get());
    if (t.is_vector() && lazy_depth_ == 0 &&
        dense_vector_access(op->buffer_var, op->index, op->predicate, t)) {
        auto it = hoisted_.find(op);
        if (it == hoisted_.end()) {
            std::string vt = (t.is_float() ? "float"
                              : t.is_int() ? "int"
                                           : "uint") +
                             std::to_string(t.lanes);
            std::string tmp = fresh("v");
            pre_.push_back("const " + vt + " " + tmp + " = *reinterpret_cast<const " + vt + "*>(" +
                           buf + " + " + index_expr(op->index.as<Ramp>()->base) + ");");
            it = hoisted_.emplace(op, tmp).first;
        }
        return it->second + "." + "xyzw"[lane];
    }
    std::string idx = index_expr(op->index, op->index.type().is_vector() ? lane : 0);
    std::string v = from_memory(buf + "[" + idx + "]", t.element_of());
    if (!op->predicate.defined() || is_one(op->predicate)) return v;
    ++index_depth_;
    std::string p = expr(op->predicate, op->predicate.type().is_vector() ? lane : 0);
    --index_depth_;
    return paren(p + " ? " + v + " : " + zero_of(t.element_of()));
}

}  // namespace tessel::internal
