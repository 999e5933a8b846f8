// Expression evaluation: the lane-wise semantics of IR.h, and a tree-walking evaluator over them.
#include "tessel/ir/ExprEval.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "tessel/ir/IROperator.h"

namespace tessel {

namespace {

Scalar int_lane(int64_t v) {
    Scalar s;
    s.i = v;
    return s;
}

Scalar float_lane(double v) {
    Scalar s;
    s.f = v;
    return s;
}

bool is_signed_int(Type t) {
    return t.is_int();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// LaneVector

void LaneVector::resize_across(size_t n, Scalar v) {
    if (n <= kInline) {
        if (size_ > kInline) std::copy(heap_.begin(), heap_.begin() + n, inline_);
        for (size_t i = size_; i < n; ++i) inline_[i] = v;
        heap_.clear();
    } else {
        if (size_ <= kInline) heap_.assign(inline_, inline_ + size_);
        heap_.resize(n, v);
    }
    size_ = n;
}

void LaneVector::throw_out_of_range(size_t i) const {
    throw std::out_of_range("Value lane " + std::to_string(i) + " of " + std::to_string(size_));
}

// ---------------------------------------------------------------------------------------------
// Value

Value Value::make_int(Type t, int64_t v) {
    TESSEL_CHECK(t.is_int_or_uint() || t.is_bool()) << "Value::make_int of " << t;
    return Value{t, LaneVector(t.lanes, int_lane(wrap_to_int_type(v, t.element_of())))};
}

Value Value::make_float(Type t, double v) {
    TESSEL_CHECK(t.is_float()) << "Value::make_float of " << t;
    return Value{t, LaneVector(t.lanes, float_lane(v))};
}

Value Value::make_bool(bool v, int lanes) {
    return make_int(Bool(lanes), v ? 1 : 0);
}

Value Value::from_ints(Type t, const std::vector<int64_t>& v) {
    TESSEL_CHECK(t.is_int_or_uint() || t.is_bool()) << "Value::from_ints of " << t;
    Value r{t.with_lanes(static_cast<int>(v.size())), {}};
    for (int64_t x : v) r.lanes.push_back(int_lane(wrap_to_int_type(x, t.element_of())));
    return r;
}

Value Value::from_doubles(Type t, const std::vector<double>& v) {
    TESSEL_CHECK(t.is_float()) << "Value::from_doubles of " << t;
    Value r{t.with_lanes(static_cast<int>(v.size())), {}};
    for (double x : v) r.lanes.push_back(float_lane(x));
    return r;
}

int64_t Value::as_int(int l) const {
    if (type.is_float())
        return eval_cast_lane(Int(64), type.element_of(), lanes.at(l), FloatMode::Ideal).i;
    return lanes.at(l).i;
}

uint64_t Value::as_uint(int l) const {
    return static_cast<uint64_t>(as_int(l));
}

double Value::as_double(int l) const {
    if (type.is_float()) return lanes.at(l).f;
    if (type.is_uint()) return static_cast<double>(static_cast<uint64_t>(lanes.at(l).i));
    return static_cast<double>(lanes.at(l).i);
}

bool Value::as_bool(int l) const {
    return type.is_float() ? lanes.at(l).f != 0.0 : lanes.at(l).i != 0;
}

std::string Value::str() const {
    std::ostringstream os;
    os.precision(17);
    os << type << "(";
    for (int l = 0; l < lane_count(); ++l) {
        if (l) os << ", ";
        if (type.is_float()) {
            os << lanes[l].f;
        } else if (type.is_uint()) {
            os << static_cast<uint64_t>(lanes[l].i);
        } else {
            os << lanes[l].i;
        }
    }
    os << ")";
    return os.str();
}

bool same_value(const Value& a, const Value& b) {
    if (a.type != b.type || a.lanes.size() != b.lanes.size()) return false;
    for (size_t l = 0; l < a.lanes.size(); ++l) {
        if (a.type.is_float()) {
            double x = a.lanes[l].f, y = b.lanes[l].f;
            if (!(x == y || (std::isnan(x) && std::isnan(y)))) return false;
        } else if (a.lanes[l].i != b.lanes[l].i) {
            return false;
        }
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Lane-wise semantics

double round_float_result(double v, Type t, FloatMode mode) {
    if (mode == FloatMode::Ideal) return v;
    if (t.bits == 16) v = static_cast<double>(static_cast<float>(v));  // computed in float32
    return round_to_float_type(v, t);
}

namespace {

Scalar float_binary(IRNodeType op, Type t, double a, double b, FloatMode mode) {
    double r = 0;
    switch (op) {
        case IRNodeType::Add: r = a + b; break;
        case IRNodeType::Sub: r = a - b; break;
        case IRNodeType::Mul: r = a * b; break;
        case IRNodeType::Div: r = a / b; break;
        case IRNodeType::Mod: r = std::fmod(a, b); break;
        case IRNodeType::FloorDiv: r = std::floor(round_float_result(a / b, t, mode)); break;
        case IRNodeType::FloorMod:
            r = a - b * std::floor(round_float_result(a / b, t, mode));
            break;
        case IRNodeType::Min: r = std::fmin(a, b); break;
        case IRNodeType::Max: r = std::fmax(a, b); break;
        case IRNodeType::EQ: return int_lane(a == b);
        case IRNodeType::NE: return int_lane(a != b);
        case IRNodeType::LT: return int_lane(a < b);
        case IRNodeType::LE: return int_lane(a <= b);
        case IRNodeType::GT: return int_lane(a > b);
        case IRNodeType::GE: return int_lane(a >= b);
        default: TESSEL_CHECK(false) << node_type_name(op) << " of floats";
    }
    return float_lane(round_float_result(r, t, mode));
}

int64_t signed_div(int64_t a, int64_t b, bool floor) {
    if (b == 0) return 0;
    if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));  // INT_MIN / -1 wraps
    int64_t q = a / b;
    if (floor && (a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

int64_t signed_mod(int64_t a, int64_t b, bool floor) {
    if (b == 0 || b == -1) return 0;
    int64_t r = a % b;
    if (floor && r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

Scalar int_binary(IRNodeType op, Type t, int64_t a, int64_t b) {
    const bool sgn = is_signed_int(t);
    const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    int64_t r = 0;
    switch (op) {
        case IRNodeType::Add: r = static_cast<int64_t>(ua + ub); break;
        case IRNodeType::Sub: r = static_cast<int64_t>(ua - ub); break;
        case IRNodeType::Mul: r = static_cast<int64_t>(ua * ub); break;
        case IRNodeType::Div:
        case IRNodeType::FloorDiv:
            if (sgn) {
                r = signed_div(a, b, op == IRNodeType::FloorDiv);
            } else {
                r = ub == 0 ? 0 : static_cast<int64_t>(ua / ub);
            }
            break;
        case IRNodeType::Mod:
        case IRNodeType::FloorMod:
            if (sgn) {
                r = signed_mod(a, b, op == IRNodeType::FloorMod);
            } else {
                r = ub == 0 ? 0 : static_cast<int64_t>(ua % ub);
            }
            break;
        case IRNodeType::Min:
            r = sgn ? std::min(a, b) : static_cast<int64_t>(std::min(ua, ub));
            break;
        case IRNodeType::Max:
            r = sgn ? std::max(a, b) : static_cast<int64_t>(std::max(ua, ub));
            break;
        case IRNodeType::EQ: return int_lane(a == b);
        case IRNodeType::NE: return int_lane(a != b);
        case IRNodeType::LT: return int_lane(sgn ? a < b : ua < ub);
        case IRNodeType::LE: return int_lane(sgn ? a <= b : ua <= ub);
        case IRNodeType::GT: return int_lane(sgn ? a > b : ua > ub);
        case IRNodeType::GE: return int_lane(sgn ? a >= b : ua >= ub);
        case IRNodeType::And: return int_lane((a != 0) && (b != 0));
        case IRNodeType::Or: return int_lane((a != 0) || (b != 0));
        default: TESSEL_CHECK(false) << node_type_name(op) << " of integers";
    }
    return int_lane(wrap_to_int_type(r, t));
}

/// Float to integer: truncate toward zero, saturate to the target's range, NaN → 0.
int64_t float_to_int(double v, Type to) {
    if (std::isnan(v)) return 0;
    v = std::trunc(v);
    if (to.is_uint() && to.bits == 64) {
        if (v <= 0) return 0;
        if (v >= 18446744073709551616.0) return static_cast<int64_t>(~uint64_t(0));
        return static_cast<int64_t>(static_cast<uint64_t>(v));
    }
    double lo = static_cast<double>(to.min_int()), hi = static_cast<double>(to.max_int());
    if (v <= lo) return to.min_int();
    if (v >= hi) return to.max_int();  // for int64, 2^63 rounds up: saturate before converting
    return static_cast<int64_t>(v);
}

}  // namespace

Scalar eval_binary_lane(IRNodeType op, Type t, Scalar a, Scalar b, FloatMode mode) {
    if (t.is_float()) return float_binary(op, t, a.f, b.f, mode);
    return int_binary(op, t.is_bool() ? UInt(8) : t, a.i, b.i);
}

Scalar eval_cast_lane(Type to, Type from, Scalar v, FloatMode mode) {
    if (to.is_bool()) return int_lane(from.is_float() ? v.f != 0.0 : v.i != 0);
    if (to.is_float()) {
        double d = from.is_float()  ? v.f
                   : from.is_uint() ? static_cast<double>(static_cast<uint64_t>(v.i))
                                    : static_cast<double>(v.i);
        return float_lane(round_float_result(d, to, mode));
    }
    if (from.is_float()) return int_lane(float_to_int(v.f, to));
    return int_lane(wrap_to_int_type(v.i, to));
}

namespace {

double float_math(Intrinsic op, const Scalar* a) {
    double x = a[0].f;
    switch (op) {
        case Intrinsic::exp: return std::exp(x);
        case Intrinsic::exp2: return std::exp2(x);
        case Intrinsic::log: return std::log(x);
        case Intrinsic::log2: return std::log2(x);
        case Intrinsic::sqrt: return std::sqrt(x);
        case Intrinsic::rsqrt: return 1.0 / std::sqrt(x);
        case Intrinsic::tanh: return std::tanh(x);
        case Intrinsic::sigmoid: return 1.0 / (1.0 + std::exp(-x));
        case Intrinsic::erf: return std::erf(x);
        case Intrinsic::sin: return std::sin(x);
        case Intrinsic::cos: return std::cos(x);
        case Intrinsic::pow: return std::pow(x, a[1].f);
        case Intrinsic::abs: return std::fabs(x);
        case Intrinsic::floor: return std::floor(x);
        case Intrinsic::ceil: return std::ceil(x);
        case Intrinsic::round: return std::nearbyint(x);
        case Intrinsic::trunc: return std::trunc(x);
        case Intrinsic::fma: return std::fma(x, a[1].f, a[2].f);
        case Intrinsic::round_tf32: return round_to_tf32(x);
        default: TESSEL_CHECK(false) << intrinsic_name(op) << " is not a float math intrinsic";
    }
    return 0;
}

}  // namespace

Scalar eval_intrinsic_lane(Intrinsic op, Type t, const Scalar* args, FloatMode mode) {
    switch (op) {
        case Intrinsic::likely: return args[0];
        case Intrinsic::swizzle: {
            BufferSwizzle z{args[1].i, args[2].i, args[3].i};
            return int_lane(wrap_to_int_type(z.apply(args[0].i), t));
        }
        case Intrinsic::isnan: return int_lane(t.is_float() && std::isnan(args[0].f));
        case Intrinsic::abs:
            if (!t.is_float()) {
                int64_t v = args[0].i;
                if (!t.is_int() || v >= 0) return int_lane(v);
                return int_lane(
                    wrap_to_int_type(static_cast<int64_t>(0 - static_cast<uint64_t>(v)), t));
            }
            break;
        case Intrinsic::fma:
            if (mode == FloatMode::Exact && t.bits <= 32) {  // one rounding to float32
                float r = std::fma(static_cast<float>(args[0].f), static_cast<float>(args[1].f),
                                   static_cast<float>(args[2].f));
                return float_lane(round_to_float_type(r, t));
            }
            break;
        case Intrinsic::if_then_else:
            TESSEL_CHECK(false) << intrinsic_name(op) << " has no lane-wise semantics";
            break;
        default:
            TESSEL_CHECK(!is_statement_intrinsic(op))
                << intrinsic_name(op) << " has no lane-wise semantics";
            break;
    }
    TESSEL_CHECK(t.is_float()) << intrinsic_name(op) << " of " << t;
    return float_lane(round_float_result(float_math(op, args), t, mode));
}

// ---------------------------------------------------------------------------------------------
// ExprEvaluator

ExprEvaluator::ExprEvaluator(FloatMode mode, ExprEvalCallbacks callbacks)
    : mode_(mode), callbacks_(std::move(callbacks)) {}

void ExprEvaluator::bind(const Var& v, Value value) {
    TESSEL_CHECK(v.defined() && value.type == v.type())
        << "binding " << (v.defined() ? v.name() : "?") << " of type "
        << (v.defined() ? v.type().str() : "?") << " to a " << value.type;
    env_[v.get()] = std::move(value);
}

void ExprEvaluator::bind_int(const Var& v, int64_t value) {
    bind(v, Value::make_int(v.type(), value));
}

void ExprEvaluator::bind_float(const Var& v, double value) {
    bind(v, Value::make_float(v.type(), round_float_result(value, v.type().element_of(), mode_)));
}

void ExprEvaluator::unbind(const Var& v) {
    env_.erase(v.get());
}

const Value* ExprEvaluator::lookup(const Variable* v) const {
    auto it = env_.find(v);
    return it == env_.end() ? nullptr : &it->second;
}

Value ExprEvaluator::eval(const Expr& e) {
    TESSEL_CHECK(e.defined()) << "evaluating an undefined expression";
    return eval_node(e);
}

Value ExprEvaluator::eval_node(const Expr& e) {
    const Type t = e.type();
    switch (e.node_type()) {
        case IRNodeType::IntImm: return Value::make_int(t, e.as<IntImm>()->value);
        case IRNodeType::UIntImm:
            return Value::make_int(t, static_cast<int64_t>(e.as<UIntImm>()->value));
        case IRNodeType::FloatImm: return Value::make_float(t, e.as<FloatImm>()->value);
        case IRNodeType::Variable: {
            const auto* v = e.as<Variable>();
            const Value* bound = lookup(v);
            if (!bound)
                TESSEL_THROW(RuntimeError) << "evaluating an expression: variable '" << v->name
                                           << "' (" << v->type << ") is not bound";
            return *bound;
        }
        case IRNodeType::Cast: {
            const auto* c = e.as<Cast>();
            Value in = eval_node(c->value);
            Value r{t, in.lanes};
            for (auto& l : r.lanes)
                l = eval_cast_lane(t.element_of(), in.type.element_of(), l, mode_);
            return r;
        }
#define TESSEL_EVAL_BINARY(T) \
    case IRNodeType::T: return eval_binary(IRNodeType::T, e.as<T>()->a, e.as<T>()->b);
            TESSEL_EVAL_BINARY(Add)
            TESSEL_EVAL_BINARY(Sub)
            TESSEL_EVAL_BINARY(Mul)
            TESSEL_EVAL_BINARY(Div) TESSEL_EVAL_BINARY(Mod) TESSEL_EVAL_BINARY(FloorDiv)
                TESSEL_EVAL_BINARY(FloorMod) TESSEL_EVAL_BINARY(Min) TESSEL_EVAL_BINARY(Max)
                    TESSEL_EVAL_BINARY(EQ) TESSEL_EVAL_BINARY(NE) TESSEL_EVAL_BINARY(LT)
                        TESSEL_EVAL_BINARY(LE) TESSEL_EVAL_BINARY(GT) TESSEL_EVAL_BINARY(GE)
                            TESSEL_EVAL_BINARY(And) TESSEL_EVAL_BINARY(Or)
#undef TESSEL_EVAL_BINARY
                                case IRNodeType::Not : {
                Value r = eval_node(e.as<Not>()->a);
                for (auto& l : r.lanes) l.i = !l.i;
                return r;
            }
        case IRNodeType::Select: return eval_select(e.as<Select>());
        case IRNodeType::Ramp: {
            const auto* r = e.as<Ramp>();
            Value base = eval_node(r->base), stride = eval_node(r->stride);
            Type et = t.element_of();
            Value out{t, {}};
            Scalar cur = base.lanes[0];
            for (int l = 0; l < r->lanes; ++l) {
                out.lanes.push_back(cur);
                cur = eval_binary_lane(IRNodeType::Add, et, cur, stride.lanes[0], mode_);
            }
            return out;
        }
        case IRNodeType::Broadcast: {
            const auto* b = e.as<Broadcast>();
            Value v = eval_node(b->value);
            return Value{t, LaneVector(b->lanes, v.lanes[0])};
        }
        case IRNodeType::Let: return eval_let(e.as<Let>());
        case IRNodeType::Call: return eval_call(e.as<Call>());
        case IRNodeType::TensorRead:
        case IRNodeType::BufferLoad:
        case IRNodeType::Load: return eval_read(e);
        case IRNodeType::Reduce:
            if (!callbacks_.reduce)
                TESSEL_THROW(RuntimeError)
                    << "evaluating an expression: a Reduce (combiner '"
                    << e.as<Reduce>()->combiner->name << "') can only be evaluated by an "
                    << "interpreter that iterates its axes";
            return callbacks_.reduce(e.as<Reduce>());
        default: break;
    }
    TESSEL_CHECK(false) << "evaluating a " << node_type_name(e.node_type());
    return {};
}

Value ExprEvaluator::eval_binary(IRNodeType op, const Expr& a, const Expr& b) {
    Value va = eval_node(a), vb = eval_node(b);
    const Type et = va.type.element_of();
    Value r{op >= IRNodeType::EQ && op <= IRNodeType::GE ? Bool(va.type.lanes) : va.type, {}};
    r.lanes.resize(va.lanes.size());
    for (size_t l = 0; l < va.lanes.size(); ++l)
        r.lanes[l] = eval_binary_lane(op, et, va.lanes[l], vb.lanes[l], mode_);
    return r;
}

Value ExprEvaluator::eval_select(const Select* s) {
    Value c = eval_node(s->condition);
    Value tv = eval_node(s->true_value), fv = eval_node(s->false_value);
    for (size_t l = 0; l < tv.lanes.size(); ++l) {
        bool take = c.lanes[c.lanes.size() == 1 ? 0 : l].i != 0;
        if (!take) tv.lanes[l] = fv.lanes[l];
    }
    return tv;
}

Value ExprEvaluator::eval_let(const Let* let) {
    Value v = eval_node(let->value);
    auto it = env_.find(let->var.get());
    std::optional<Value> saved;
    if (it != env_.end()) saved = it->second;
    env_[let->var.get()] = std::move(v);
    struct Restore {
        ExprEvaluator* self;
        const Variable* var;
        std::optional<Value>* saved;
        ~Restore() {
            if (*saved) {
                self->env_[var] = std::move(**saved);
            } else {
                self->env_.erase(var);
            }
        }
    } restore{this, let->var.get(), &saved};
    return eval_node(let->body);
}

Value ExprEvaluator::eval_call(const Call* c) {
    if (c->op == Intrinsic::if_then_else) return eval_if_then_else(c);
    if (!intrinsic_is_pure(c->op))
        TESSEL_THROW(RuntimeError) << "evaluating an expression: " << intrinsic_name(c->op)
                                   << "() is only valid as an Evaluate statement of a "
                                      "thread-bound loop nest";
    std::vector<Value> args;
    args.reserve(c->args.size());
    for (const Expr& a : c->args) args.push_back(eval_node(a));
    const Type at = args[0].type.element_of();
    Value r{c->type, {}};
    r.lanes.resize(c->type.lanes);
    Scalar lane_args[4];
    for (int l = 0; l < c->type.lanes; ++l) {
        for (size_t k = 0; k < args.size(); ++k)
            lane_args[k] = args[k].lanes[args[k].lane_count() == 1 ? 0 : l];
        r.lanes[l] = eval_intrinsic_lane(c->op, at, lane_args, mode_);
    }
    return r;
}

Value ExprEvaluator::eval_if_then_else(const Call* c) {
    Value cond = eval_node(c->args[0]);
    if (cond.lane_count() == 1) return eval_node(c->args[cond.lanes[0].i ? 1 : 2]);
    // Vector condition: evaluate each branch under the mask of the lanes that take it.
    const int n = cond.lane_count();
    Value result{c->type, LaneVector(n, int_lane(0))};
    if (c->type.is_float())
        for (auto& l : result.lanes) l.f = 0.0;
    std::vector<uint8_t> outer = active_;
    for (int branch = 1; branch <= 2; ++branch) {
        std::vector<uint8_t> mask(n);
        bool any = false;
        for (int l = 0; l < n; ++l) {
            bool takes = (cond.lanes[l].i != 0) == (branch == 1);
            mask[l] = takes && (outer.empty() || outer[l]);
            any = any || mask[l];
        }
        if (!any) continue;
        active_ = mask;
        Value v;
        try {
            v = eval_node(c->args[branch]);
        } catch (...) {
            active_ = outer;
            throw;
        }
        active_ = outer;
        for (int l = 0; l < n; ++l)
            if (mask[l]) result.lanes[l] = v.lanes[l];
    }
    return result;
}

Value ExprEvaluator::active_mask(int lanes) const {
    Value m = Value::make_bool(true, lanes);
    if (!active_.empty() && static_cast<int>(active_.size()) == lanes)
        for (int l = 0; l < lanes; ++l) m.lanes[l].i = active_[l];
    return m;
}

Value ExprEvaluator::eval_read(const Expr& e) {
    if (const auto* r = e.as<TensorRead>()) {
        if (!callbacks_.tensor_read)
            TESSEL_THROW(RuntimeError) << "evaluating an expression: no way to read tensor '"
                                       << r->tensor.name() << "' (no tensor_read callback)";
        std::vector<Value> idx;
        for (const Expr& i : r->indices) idx.push_back(eval_node(i));
        return callbacks_.tensor_read(r, idx);
    }
    if (const auto* b = e.as<BufferLoad>()) {
        if (!callbacks_.buffer_load)
            TESSEL_THROW(RuntimeError) << "evaluating an expression: no way to read buffer '"
                                       << b->buffer.name() << "' (no buffer_load callback)";
        std::vector<Value> idx;
        for (const Expr& i : b->indices) idx.push_back(eval_node(i));
        return callbacks_.buffer_load(b, idx, active_mask(e.type().lanes));
    }
    const auto* ld = e.as<Load>();
    if (!callbacks_.load)
        TESSEL_THROW(RuntimeError) << "evaluating an expression: no way to load from '"
                                   << ld->buffer_var.name() << "' (no load callback)";
    Value index = eval_node(ld->index);
    Value mask = active_mask(e.type().lanes);
    if (ld->predicate.defined()) {
        Value p = eval_node(ld->predicate);
        for (int l = 0; l < mask.lane_count(); ++l) mask.lanes[l].i &= p.lanes[l].i;
    }
    return callbacks_.load(ld, index, mask);
}

Value evaluate_expr(const Expr& e, const std::vector<std::pair<Var, Value>>& bindings,
                    FloatMode mode, ExprEvalCallbacks callbacks) {
    ExprEvaluator ev(mode, std::move(callbacks));
    for (const auto& [v, val] : bindings) ev.bind(v, val);
    return ev.eval(e);
}

}  // namespace tessel
