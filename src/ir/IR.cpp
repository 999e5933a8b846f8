// Construction and checking of IR nodes.
#include "tessel/ir/IR.h"

#include <cmath>
#include <cstring>
#include <optional>

#include "tessel/ir/Fragment.h"

namespace tessel {

void destroy_ref_counted(const RefCounted* object) {
    // While one deletion runs on this thread, the deletions it triggers wait in its queue.
    thread_local std::vector<const RefCounted*>* pending = nullptr;
    if (pending) {
        pending->push_back(object);
        return;
    }
    std::vector<const RefCounted*> queue{object};
    pending = &queue;
    while (!queue.empty()) {
        const RefCounted* next = queue.back();
        queue.pop_back();
        delete next;
    }
    pending = nullptr;
}

const char* node_type_name(IRNodeType t) {
    switch (t) {
#define TESSEL_NODE_NAME(T) \
    case IRNodeType::T: return #T;
        TESSEL_FOR_EACH_EXPR_NODE(TESSEL_NODE_NAME)
        TESSEL_FOR_EACH_STMT_NODE(TESSEL_NODE_NAME)
#undef TESSEL_NODE_NAME
    }
    return "?";
}

// ---------------------------------------------------------------------------------------------
// Constants

double round_to_float_type(double v, Type t) {
    TESSEL_CHECK(t.is_float()) << "round_to_float_type on " << t;
    if (t.bits == 64) return v;
    if (t.bits == 32 && !t.is_bfloat()) return static_cast<double>(static_cast<float>(v));
    if (std::isnan(v) || std::isinf(v)) return v;
    // float16 / bfloat16: round the float32 value to nearest-even at the narrower mantissa.
    float f = static_cast<float>(v);
    if (t.is_bfloat()) {
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
        bits = (bits + rounding) & 0xffff0000u;
        std::memcpy(&f, &bits, 4);
        return f;
    }
    // IEEE half: 10 mantissa bits, exponent range [-14, 15], subnormals down to 2^-24.
    double a = std::fabs(v);
    if (a >= 65520.0) return std::copysign(INFINITY, v);
    int exp;
    std::frexp(a, &exp);  // a = m * 2^exp, m in [0.5, 1)
    int e = std::max(exp - 1, -14);
    double quantum = std::ldexp(1.0, e - 10);
    double r = std::nearbyint(a / quantum) * quantum;  // default rounding mode: nearest-even
    return std::copysign(r, v);
}

int64_t wrap_to_int_type(int64_t v, Type t) {
    if (t.is_bool()) return v != 0;
    TESSEL_CHECK(t.is_int_or_uint()) << "wrap_to_int_type on " << t;
    if (t.bits == 64) return v;
    uint64_t mask = (uint64_t(1) << t.bits) - 1;
    uint64_t u = static_cast<uint64_t>(v) & mask;
    if (t.is_int() && (u >> (t.bits - 1)) & 1) u |= ~mask;
    return static_cast<int64_t>(u);
}

Expr IntImm::make(Type t, int64_t value) {
    TESSEL_CHECK(t.is_scalar() && (t.is_int() || t.is_bool())) << "IntImm of type " << t;
    TESSEL_CHECK(value >= t.min_int() && value <= t.max_int())
        << "IntImm " << value << " does not fit " << t;
    return new IntImm(t, value);
}

Expr UIntImm::make(Type t, uint64_t value) {
    TESSEL_CHECK(t.is_scalar() && t.is_uint()) << "UIntImm of type " << t;
    TESSEL_CHECK(t.bits == 64 || value <= (uint64_t(1) << t.bits) - 1)
        << "UIntImm " << value << " does not fit " << t;
    return new UIntImm(t, value);
}

Expr FloatImm::make(Type t, double value) {
    TESSEL_CHECK(t.is_scalar() && t.is_float()) << "FloatImm of type " << t;
    return new FloatImm(t, round_to_float_type(value, t));
}

Expr make_const(Type t, int64_t value) {
    TESSEL_CHECK(!t.is_handle()) << "make_const of a handle";
    if (t.is_vector()) return Broadcast::make(make_const(t.element_of(), value), t.lanes);
    if (t.is_float()) return FloatImm::make(t, static_cast<double>(value));
    int64_t w = wrap_to_int_type(value, t);
    if (t.is_uint()) {
        uint64_t u = static_cast<uint64_t>(w);
        if (t.bits < 64) u &= (uint64_t(1) << t.bits) - 1;
        return UIntImm::make(t, u);
    }
    return IntImm::make(t, w);
}

Expr make_const(Type t, double value) {
    if (t.is_vector()) return Broadcast::make(make_const(t.element_of(), value), t.lanes);
    if (t.is_float()) return FloatImm::make(t, value);
    TESSEL_CHECK(std::isfinite(value) && value == std::trunc(value))
        << "make_const(" << t << ", " << value << "): not an integer value";
    return make_const(t, static_cast<int64_t>(value));
}

Expr const_true(int lanes) {
    return make_const(Bool(lanes), int64_t(1));
}
Expr const_false(int lanes) {
    return make_const(Bool(lanes), int64_t(0));
}

std::optional<int64_t> as_const_int(const Expr& e) {
    if (!e.defined()) return std::nullopt;
    if (const auto* b = e.as<Broadcast>()) return as_const_int(b->value);
    if (const auto* i = e.as<IntImm>()) return i->value;
    if (const auto* u = e.as<UIntImm>()) {
        if (u->value <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(u->value);
    }
    return std::nullopt;
}

bool is_const_int(const Expr& e, int64_t value) {
    auto v = as_const_int(e);
    return v && *v == value;
}

std::optional<double> as_const_float(const Expr& e) {
    if (!e.defined()) return std::nullopt;
    if (const auto* b = e.as<Broadcast>()) return as_const_float(b->value);
    if (const auto* f = e.as<FloatImm>()) return f->value;
    return std::nullopt;
}

Expr::Expr(int value) : Expr(IntImm::make(Int(32), value)) {}
Expr::Expr(int64_t value) : Expr(IntImm::make(Int(64), value)) {}
Expr::Expr(float value) : Expr(FloatImm::make(Float(32), value)) {}
Expr::Expr(double value) : Expr(FloatImm::make(Float(64), value)) {}

// ---------------------------------------------------------------------------------------------
// Variables, axes, reducers, buffers

Var::Var(const std::string& name, Type t) : Expr(new Variable(name, t)) {}

IterVar::IterVar(Var var, Range dom, IterVarKind kind) {
    TESSEL_CHECK(var.defined()) << "IterVar without a variable";
    auto* n = new IterVarNode();
    n->var = std::move(var);
    n->dom = std::move(dom);
    n->kind = kind;
    static_cast<Ptr<IterVarNode>&>(*this) = Ptr<IterVarNode>(n);
}

CommReducer::CommReducer(std::string name, std::vector<Var> lhs, std::vector<Var> rhs,
                         std::vector<Expr> result, std::vector<Expr> identity) {
    TESSEL_CHECK(!result.empty() && lhs.size() == result.size() && rhs.size() == result.size() &&
                 identity.size() == result.size())
        << "CommReducer '" << name << "': mismatched value counts";
    auto* n = new CommReducerNode();
    n->name = std::move(name);
    n->lhs = std::move(lhs);
    n->rhs = std::move(rhs);
    n->result = std::move(result);
    n->identity = std::move(identity);
    static_cast<Ptr<CommReducerNode>&>(*this) = Ptr<CommReducerNode>(n);
}

const char* scope_name(StorageScope s) {
    switch (s) {
        case StorageScope::Global: return "global";
        case StorageScope::Shared: return "shared";
        case StorageScope::Local: return "local";
        case StorageScope::Warp: return "warp";
    }
    return "?";
}

Buffer::Buffer(std::string name, Type dtype, std::vector<Expr> shape, StorageScope scope) {
    auto* n = new BufferNode();
    n->data = Var(name, Handle());
    n->dtype = dtype;
    n->shape = std::move(shape);
    n->elem_offset = make_zero(n->shape.empty() ? Int(32) : n->shape[0].type());
    n->name = std::move(name);
    n->scope = scope;
    static_cast<Ptr<BufferNode>&>(*this) = Ptr<BufferNode>(n);
}

bool same_tensor(const Tensor& a, const Tensor& b) {
    if (!a.defined() || !b.defined()) return a.defined() == b.defined();
    if (!a.op().defined() || !b.op().defined()) return a.same_as(b);
    return a.op().same_as(b.op()) && a.value_index() == b.value_index();
}

size_t TensorHash::operator()(const Tensor& t) const {
    if (!t.defined()) return 0;
    const void* owner = t.op().defined() ? static_cast<const void*>(t.op().get()) : t.get();
    size_t h = std::hash<const void*>()(owner);
    return h ^ (std::hash<int>()(t.value_index()) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

// ---------------------------------------------------------------------------------------------
// Expression nodes

Expr Cast::make(Type t, Expr value) {
    TESSEL_CHECK(value.defined()) << "Cast of an undefined expression";
    TESSEL_CHECK(t.lanes == value.type().lanes) << "Cast " << value.type() << " to " << t;
    TESSEL_CHECK(!t.is_handle() && !value.type().is_handle()) << "Cast of a handle";
    return new Cast(t, std::move(value));
}

template <typename T>
Expr BinaryOpNode<T>::make(Expr a, Expr b) {
    TESSEL_CHECK(a.defined() && b.defined())
        << node_type_name(T::kNodeType) << " of undefined operands";
    TESSEL_CHECK(a.type() == b.type()) << node_type_name(T::kNodeType) << " of mismatched types "
                                       << a.type() << " and " << b.type();
    if constexpr (T::kNodeType == IRNodeType::And || T::kNodeType == IRNodeType::Or) {
        TESSEL_CHECK(a.type().is_bool()) << node_type_name(T::kNodeType) << " of " << a.type();
    } else {
        TESSEL_CHECK(!a.type().is_bool() && !a.type().is_handle())
            << node_type_name(T::kNodeType) << " of " << a.type();
    }
    Type t = a.type();
    return new T(t, std::move(a), std::move(b));
}

template <typename T>
Expr CmpOpNode<T>::make(Expr a, Expr b) {
    TESSEL_CHECK(a.defined() && b.defined())
        << node_type_name(T::kNodeType) << " of undefined operands";
    TESSEL_CHECK(a.type() == b.type()) << node_type_name(T::kNodeType) << " of mismatched types "
                                       << a.type() << " and " << b.type();
    TESSEL_CHECK(!a.type().is_handle()) << "comparison of handles";
    Type t = Bool(a.type().lanes);
    return new T(t, std::move(a), std::move(b));
}

#define TESSEL_INSTANTIATE(T, Base) template struct Base<T>;
TESSEL_INSTANTIATE(Add, BinaryOpNode)
TESSEL_INSTANTIATE(Sub, BinaryOpNode)
TESSEL_INSTANTIATE(Mul, BinaryOpNode)
TESSEL_INSTANTIATE(Div, BinaryOpNode)
TESSEL_INSTANTIATE(Mod, BinaryOpNode)
TESSEL_INSTANTIATE(FloorDiv, BinaryOpNode)
TESSEL_INSTANTIATE(FloorMod, BinaryOpNode)
TESSEL_INSTANTIATE(Min, BinaryOpNode)
TESSEL_INSTANTIATE(Max, BinaryOpNode)
TESSEL_INSTANTIATE(And, BinaryOpNode)
TESSEL_INSTANTIATE(Or, BinaryOpNode)
TESSEL_INSTANTIATE(EQ, CmpOpNode)
TESSEL_INSTANTIATE(NE, CmpOpNode)
TESSEL_INSTANTIATE(LT, CmpOpNode)
TESSEL_INSTANTIATE(LE, CmpOpNode)
TESSEL_INSTANTIATE(GT, CmpOpNode)
TESSEL_INSTANTIATE(GE, CmpOpNode)
#undef TESSEL_INSTANTIATE

Expr Not::make(Expr a) {
    TESSEL_CHECK(a.defined() && a.type().is_bool()) << "Not of a non-bool";
    Type t = a.type();
    return new Not(t, std::move(a));
}

Expr Select::make(Expr condition, Expr true_value, Expr false_value) {
    TESSEL_CHECK(condition.defined() && true_value.defined() && false_value.defined())
        << "Select with undefined operands";
    TESSEL_CHECK(condition.type().is_bool()) << "Select condition of type " << condition.type();
    TESSEL_CHECK(true_value.type() == false_value.type())
        << "Select of mismatched types " << true_value.type() << " and " << false_value.type();
    TESSEL_CHECK(condition.type().lanes == 1 || condition.type().lanes == true_value.type().lanes)
        << "Select condition lanes " << condition.type().lanes << " vs values "
        << true_value.type().lanes;
    Type t = true_value.type();
    return new Select(t, std::move(condition), std::move(true_value), std::move(false_value));
}

Expr Ramp::make(Expr base, Expr stride, int lanes) {
    TESSEL_CHECK(base.defined() && stride.defined()) << "Ramp of undefined operands";
    TESSEL_CHECK(base.type().is_scalar() && base.type() == stride.type())
        << "Ramp base " << base.type() << " stride " << stride.type();
    TESSEL_CHECK(base.type().is_int_or_uint()) << "Ramp of " << base.type();
    TESSEL_CHECK(lanes > 1) << "Ramp of " << lanes << " lanes";
    Type t = base.type().with_lanes(lanes);
    return new Ramp(t, std::move(base), std::move(stride), lanes);
}

Expr Broadcast::make(Expr value, int lanes) {
    TESSEL_CHECK(value.defined() && value.type().is_scalar()) << "Broadcast of a non-scalar";
    TESSEL_CHECK(lanes > 1) << "Broadcast of " << lanes << " lanes";
    Type t = value.type().with_lanes(lanes);
    return new Broadcast(t, std::move(value), lanes);
}

Expr Let::make(Var var, Expr value, Expr body) {
    TESSEL_CHECK(var.defined() && value.defined() && body.defined()) << "Let with undefined parts";
    TESSEL_CHECK(var.type() == value.type())
        << "Let " << var.name() << " of type " << var.type() << " bound to " << value.type();
    Type t = body.type();
    return new Let(t, std::move(var), std::move(value), std::move(body));
}

namespace {
struct IntrinsicInfo {
    const char* name;
    int arity;
    bool pure;
};
const IntrinsicInfo kIntrinsics[] = {
#define TESSEL_INTRINSIC_INFO(name, arity, pure) {#name, arity, pure},
    TESSEL_FOR_EACH_INTRINSIC(TESSEL_INTRINSIC_INFO)
#undef TESSEL_INTRINSIC_INFO
};
}  // namespace

const char* intrinsic_name(Intrinsic op) {
    return kIntrinsics[static_cast<int>(op)].name;
}
int intrinsic_arity(Intrinsic op) {
    return kIntrinsics[static_cast<int>(op)].arity;
}
bool intrinsic_is_pure(Intrinsic op) {
    return kIntrinsics[static_cast<int>(op)].pure;
}

bool is_statement_intrinsic(Intrinsic op) {
    return !intrinsic_is_pure(op);
}

bool intrinsic_from_name(const std::string& name, Intrinsic* out) {
    for (size_t i = 0; i < std::size(kIntrinsics); ++i) {
        if (name == kIntrinsics[i].name) {
            *out = static_cast<Intrinsic>(i);
            return true;
        }
    }
    return false;
}

namespace {

void check_allreduce_args(const std::vector<Expr>& args) {
    TESSEL_CHECK(args.size() >= 2) << "thread_allreduce needs n and m";
    auto n = as_const_int(args[0]), m = as_const_int(args[1]);
    TESSEL_CHECK(n && m && *n >= 1 && *m >= 1) << "thread_allreduce: n and m must be positive";
    TESSEL_CHECK(static_cast<int64_t>(args.size()) == 2 + 6 * *n + *m)
        << "thread_allreduce: expected " << 2 + 6 * *n + *m << " arguments, got " << args.size();
    for (int64_t k = 0; k < *n; ++k) {
        TESSEL_CHECK(args[2 + 2 * *n + k].as<Variable>() && args[2 + 3 * *n + k].as<Variable>())
            << "thread_allreduce: lhs and rhs must be variables";
        TESSEL_CHECK(args[2 + 5 * *n + k].type().is_handle())
            << "thread_allreduce: dest must be buffer handles";
    }
    for (int64_t k = 0; k < *m; ++k)
        TESSEL_CHECK(args[2 + 6 * *n + k].as<Variable>())
            << "thread_allreduce: the thread axes must be loop variables";
}

void check_cp_async_args(const std::vector<Expr>& args) {
    TESSEL_CHECK(args[0].as<Variable>() && args[0].type().is_handle() && args[2].as<Variable>() &&
                 args[2].type().is_handle())
        << "cp_async: dst and src must be buffer handles";
    for (int k : {1, 3, 5})
        TESSEL_CHECK(args[k].type().is_scalar() && args[k].type().is_int_or_uint())
            << "cp_async: argument " << k << " must be a scalar integer";
    auto bytes = as_const_int(args[4]);
    TESSEL_CHECK(bytes && (*bytes == 4 || *bytes == 8 || *bytes == 16))
        << "cp_async: bytes must be the constant 4, 8 or 16";
}

// Tensor-core intrinsics: constant kinds, tile operands as pairs of (Buffer)Loads (ir/IR.h).
void check_tensor_core_args(Intrinsic op, const std::vector<Expr>& args) {
    const char* name = intrinsic_name(op);
    auto is_tile = [](const Expr& e) {
        return e.type().is_scalar() && (e.as<Load>() || e.as<BufferLoad>());
    };
    size_t first_tile = 0;
    if (op == Intrinsic::mma_sync) {
        TESSEL_CHECK(args.size() == 8 || args.size() == 9)
            << name << " takes 8 arguments and an optional B fragment kind, got " << args.size();
        FragmentKind k;
        auto c = args.size() == 9 ? as_const_int(args[8]) : std::optional<int64_t>(0);
        TESSEL_CHECK(args.size() == 8 || (c && fragment_kind_from_int(*c, &k) &&
                                          (k == FragmentKind::B16 || k == FragmentKind::B16T ||
                                           k == FragmentKind::B8 || k == FragmentKind::B8T)))
            << name << ": B's fragment kind must be B16, B16T, B8 or B8T";
    } else {
        FragmentKind k;
        auto c = as_const_int(args[0]);
        TESSEL_CHECK(c && fragment_kind_from_int(*c, &k)) << name << ": bad fragment kind";
        first_tile = op == Intrinsic::ldmatrix ? 2 : 1;
    }
    if (op == Intrinsic::fragment_store) {
        TESSEL_CHECK(args.size() == 5 || args.size() == 7)
            << name << " takes 5 arguments and optional row and column limits, got " << args.size();
        for (size_t a = 5; a < args.size(); ++a)
            TESSEL_CHECK(args[a].type() == Int(32))
                << name << ": limit " << a - 5 << " must be an int32, got " << args[a].type();
    }
    size_t tiles = op == Intrinsic::mma_sync ? 8 : op == Intrinsic::fragment_fill ? 2 : 4;
    for (size_t a = first_tile; a < first_tile + tiles; ++a)
        TESSEL_CHECK(is_tile(args[a])) << name << ": argument " << a << " is not a tile operand";
}

// wgmma(D, D', A, A', B, B', Bp, n, b_mn): tile operands, then constants (ir/IR.h).
void check_wgmma_args(const std::vector<Expr>& args) {
    for (size_t a = 0; a < 7; ++a)
        TESSEL_CHECK(args[a].type().is_scalar() && (args[a].as<Load>() || args[a].as<BufferLoad>()))
            << "wgmma: argument " << a << " is not a tile operand";
    auto n = as_const_int(args[7]), mn = as_const_int(args[8]);
    TESSEL_CHECK(n && *n >= 8 && *n <= 256 && *n % 8 == 0)
        << "wgmma: n must be a constant multiple of 8 in [8, 256]";
    TESSEL_CHECK(mn && (*mn == 0 || *mn == 1)) << "wgmma: b_mn must be the constant 0 or 1";
    TESSEL_CHECK(args[0].type() == Float(32) &&
                 (args[2].type() == Float(16) || args[2].type() == BFloat(16)) &&
                 args[4].type() == args[2].type())
        << "wgmma: float32 accumulators from float16 or bfloat16 operands, got " << args[0].type()
        << " from " << args[2].type() << " x " << args[4].type();
}

// dot_product(lanes, group, C, A, B, B'): constants, then Loads of the documented types.
void check_dot_product_args(const std::vector<Expr>& args) {
    auto lanes = as_const_int(args[0]), group = as_const_int(args[1]);
    TESSEL_CHECK(lanes && *lanes > 0 && group && *group > 0)
        << "dot_product: lanes and group must be positive constants";
    for (size_t a = 2; a < 6; ++a)
        TESSEL_CHECK(args[a].type().is_scalar() && (args[a].as<Load>() || args[a].as<BufferLoad>()))
            << "dot_product: argument " << a << " is not a Load";
    const Type c = args[2].type(), a = args[3].type(), b = args[4].type();
    const bool vnni = c == Int(32) && a == UInt(8) && b == Int(8);
    const bool bf16 = c == Float(32) && a == BFloat(16) && b == BFloat(16);
    TESSEL_CHECK((vnni || bf16) && args[5].type() == b)
        << "dot_product: accumulators " << c << " from " << a << " x " << b
        << " (int32 from uint8 x int8, or float32 from bfloat16 x bfloat16)";
}

// mbarrier_*(bar, index, n) (ir/IR.h).
void check_mbarrier_args(Intrinsic op, const std::vector<Expr>& args) {
    const char* name = intrinsic_name(op);
    TESSEL_CHECK(args[0].as<Variable>() && args[0].type().is_handle())
        << name << ": the barrier must be a buffer handle";
    for (size_t k = 1; k < args.size(); ++k)
        TESSEL_CHECK(args[k].type().is_scalar() && args[k].type().is_int_or_uint())
            << name << ": argument " << k << " must be a scalar integer";
}

// tma_load's arguments, and tma_store's (src, src_index, dst, swizzle, rank, box[rank],
// coords[rank]): the same without the barrier's two, its swizzle at `first` (5 or 3).
void check_tma_args(Intrinsic op, const std::vector<Expr>& args) {
    const char* name = intrinsic_name(op);
    const size_t first = op == Intrinsic::tma_load ? 5 : 3;
    TESSEL_CHECK(args.size() >= first + 4)
        << name << " takes at least " << first + 4 << " arguments, got " << args.size();
    for (size_t k : {size_t(0), size_t(2), size_t(3)})
        if (k < first)
            TESSEL_CHECK(args[k].as<Variable>() && args[k].type().is_handle())
                << name << ": argument " << k << " must be a buffer handle";
    auto swizzle = as_const_int(args[first]), rank = as_const_int(args[first + 1]);
    TESSEL_CHECK(swizzle && (*swizzle == 0 || *swizzle == 32 || *swizzle == 64 || *swizzle == 128))
        << name << ": swizzle must be the constant 0, 32, 64 or 128";
    TESSEL_CHECK(rank && *rank >= 1 && *rank <= 5) << name << ": rank must be a constant in 1..5";
    const size_t box0 = first + 2, coord0 = box0 + static_cast<size_t>(*rank);
    TESSEL_CHECK(args.size() == box0 + 2 * static_cast<size_t>(*rank))
        << name << " of rank " << *rank << " takes " << box0 + 2 * *rank << " arguments, got "
        << args.size();
    for (size_t d = 0; d < static_cast<size_t>(*rank); ++d) {
        auto box = as_const_int(args[box0 + d]);
        TESSEL_CHECK(box && *box >= 1 && *box <= 256)
            << name << ": box extent " << d << " must be a constant in 1..256";
        const Type t = args[coord0 + d].type();
        TESSEL_CHECK(t.is_scalar() && t.is_int_or_uint())
            << name << ": coordinate " << d << " must be a scalar integer";
    }
}

}  // namespace

bool is_tensor_core_intrinsic(Intrinsic op) {
    return op == Intrinsic::mma_sync || op == Intrinsic::ldmatrix ||
           op == Intrinsic::fragment_load || op == Intrinsic::fragment_store ||
           op == Intrinsic::fragment_fill || op == Intrinsic::wgmma ||
           op == Intrinsic::wgmma_fence || op == Intrinsic::wgmma_commit ||
           op == Intrinsic::wgmma_wait;
}

bool is_warp_collective(Intrinsic op) {
    return op == Intrinsic::mma_sync || op == Intrinsic::ldmatrix || op == Intrinsic::wgmma;
}

Expr Call::make(Intrinsic op, std::vector<Expr> args) {
    const char* name = intrinsic_name(op);
    TESSEL_CHECK(intrinsic_arity(op) < 0 || static_cast<int>(args.size()) == intrinsic_arity(op))
        << name << " takes " << intrinsic_arity(op) << " arguments, got " << args.size();
    for (const Expr& a : args) TESSEL_CHECK(a.defined()) << name << " of an undefined argument";
    Type t = Int(32);
    switch (op) {
        case Intrinsic::thread_barrier: break;
        case Intrinsic::thread_allreduce: check_allreduce_args(args); break;
        case Intrinsic::cp_async: check_cp_async_args(args); break;
        case Intrinsic::cp_async_commit: break;
        case Intrinsic::cp_async_wait: {
            auto n = as_const_int(args[0]);
            TESSEL_CHECK(n && *n >= 0) << "cp_async_wait: n must be a non-negative constant";
            break;
        }
        case Intrinsic::mma_sync:
        case Intrinsic::ldmatrix:
        case Intrinsic::fragment_load:
        case Intrinsic::fragment_store:
        case Intrinsic::fragment_fill: check_tensor_core_args(op, args); break;
        case Intrinsic::dot_product: check_dot_product_args(args); break;
        case Intrinsic::wgmma: check_wgmma_args(args); break;
        case Intrinsic::wgmma_fence:
        case Intrinsic::wgmma_commit:
        case Intrinsic::fence_proxy_async: break;
        case Intrinsic::mbarrier_init:
        case Intrinsic::mbarrier_expect_tx:
        case Intrinsic::mbarrier_wait:
        case Intrinsic::mbarrier_arrive: check_mbarrier_args(op, args); break;
        case Intrinsic::setmaxnreg: {
            auto n = as_const_int(args[0]), inc = as_const_int(args[1]);
            TESSEL_CHECK(n && *n >= 24 && *n <= 256 && *n % 8 == 0 && inc &&
                         (*inc == 0 || *inc == 1))
                << "setmaxnreg: count must be a constant multiple of 8 in 24..256, increase 0 or 1";
            break;
        }
        case Intrinsic::tma_load:
        case Intrinsic::tma_store: check_tma_args(op, args); break;
        case Intrinsic::tma_store_wait: break;
        case Intrinsic::tile_arrive: {
            auto count = as_const_int(args[2]);
            TESSEL_CHECK(args[0].as<Variable>() && args[0].type().is_handle() &&
                         args[3].as<Variable>() && args[3].type().is_handle())
                << "tile_arrive: counter and last must be handle Variables";
            TESSEL_CHECK(args[1].type().is_int_or_uint() && args[1].type().is_scalar())
                << "tile_arrive: the tile must be a scalar integer";
            TESSEL_CHECK(count && *count >= 1) << "tile_arrive: count must be a positive constant";
            break;
        }
        case Intrinsic::wgmma_wait: {
            auto n = as_const_int(args[0]);
            TESSEL_CHECK(n && *n >= 0) << "wgmma_wait: n must be a non-negative constant";
            break;
        }
        case Intrinsic::abs:
            t = args[0].type();
            TESSEL_CHECK(!t.is_bool() && !t.is_handle()) << "abs of " << t;
            break;
        case Intrinsic::isnan:
            TESSEL_CHECK(args[0].type().is_float()) << "isnan of " << args[0].type();
            t = Bool(args[0].type().lanes);
            break;
        case Intrinsic::likely:
            t = args[0].type();
            TESSEL_CHECK(t.is_bool()) << "likely of " << t;
            break;
        case Intrinsic::swizzle:
            t = args[0].type();
            TESSEL_CHECK(t.is_int_or_uint()) << "swizzle of " << t;
            for (size_t k = 1; k < 4; ++k) {
                auto c = as_const_int(args[k]);
                TESSEL_CHECK(c && *c > 0) << "swizzle: argument " << k << " must be a positive "
                                          << "constant";
            }
            TESSEL_CHECK(
                *as_const_int(args[2]) % (*as_const_int(args[1]) * *as_const_int(args[3])) == 0)
                << "swizzle: span must be a multiple of vector * phases";
            break;
        case Intrinsic::if_then_else:
            TESSEL_CHECK(args[0].type().is_bool())
                << "if_then_else condition of " << args[0].type();
            TESSEL_CHECK(args[1].type() == args[2].type())
                << "if_then_else of mismatched types " << args[1].type() << " and "
                << args[2].type();
            TESSEL_CHECK(args[0].type().lanes == 1 || args[0].type().lanes == args[1].type().lanes)
                << "if_then_else condition lanes";
            t = args[1].type();
            break;
        default:
            t = args[0].type();
            TESSEL_CHECK(t.is_float()) << name << " of " << t << " (float expected)";
            for (const Expr& a : args)
                TESSEL_CHECK(a.type() == t)
                    << name << " of mismatched types " << t << ", " << a.type();
    }
    return new Call(t, op, std::move(args));
}

Expr TensorRead::make(Tensor tensor, std::vector<Expr> indices) {
    TESSEL_CHECK(tensor.defined()) << "read of an undefined tensor";
    TESSEL_CHECK(indices.size() == tensor.ndim())
        << "tensor " << tensor.name() << " read with " << indices.size() << " indices";
    for (const Expr& i : indices)
        TESSEL_CHECK(i.defined() && i.type().is_scalar() && i.type().is_int_or_uint())
            << "tensor " << tensor.name() << " read with a non-integer index";
    Type t = tensor.dtype();
    return new TensorRead(t, std::move(tensor), std::move(indices));
}

Expr Reduce::make(CommReducer combiner, std::vector<Expr> source, std::vector<IterVar> axis,
                  Expr condition, int value_index) {
    TESSEL_CHECK(combiner.defined()) << "Reduce without a combiner";
    TESSEL_CHECK(source.size() == combiner.num_values())
        << "Reduce with " << source.size() << " sources for a " << combiner.num_values()
        << "-value combiner";
    TESSEL_CHECK(value_index >= 0 && value_index < static_cast<int>(source.size()))
        << "Reduce value_index " << value_index;
    for (const IterVar& iv : axis)
        TESSEL_CHECK(iv.defined() && iv.kind() == IterVarKind::Reduce)
            << "Reduce over a non-reduce axis";
    if (!condition.defined()) condition = const_true();
    TESSEL_CHECK(condition.type() == Bool()) << "Reduce condition of type " << condition.type();
    Type t = source[value_index].type();
    return new Reduce(t, std::move(combiner), std::move(source), std::move(axis),
                      std::move(condition), value_index);
}

Expr Load::make(Type type, Var buffer_var, Expr index, Expr predicate) {
    TESSEL_CHECK(buffer_var.defined() && index.defined()) << "Load with undefined parts";
    TESSEL_CHECK(buffer_var.type().is_handle()) << "Load from non-handle " << buffer_var.name();
    TESSEL_CHECK(index.type().is_int_or_uint() && index.type().lanes == type.lanes)
        << "Load of " << type << " with index " << index.type();
    if (predicate.defined())
        TESSEL_CHECK(predicate.type() == Bool(type.lanes)) << "Load predicate " << predicate.type();
    return new Load(type, std::move(buffer_var), std::move(index), std::move(predicate));
}

Expr BufferLoad::make(Buffer buffer, std::vector<Expr> indices) {
    TESSEL_CHECK(buffer.defined()) << "BufferLoad of an undefined buffer";
    TESSEL_CHECK(indices.size() == buffer.shape().size())
        << "buffer " << buffer.name() << " loaded with " << indices.size() << " indices";
    int lanes = 1;
    for (const Expr& i : indices) {
        TESSEL_CHECK(i.defined() && i.type().is_int_or_uint())
            << "buffer " << buffer.name() << " loaded with a non-integer index";
        lanes = std::max<int>(lanes, i.type().lanes);
    }
    Type t = buffer.dtype().with_lanes(lanes);
    return new BufferLoad(t, std::move(buffer), std::move(indices));
}

// ---------------------------------------------------------------------------------------------
// Statement nodes

template <typename T>
static T* new_stmt() {
    return new T();
}

Stmt LetStmt::make(Var var, Expr value, Stmt body) {
    TESSEL_CHECK(var.defined() && value.defined() && body.defined())
        << "LetStmt with undefined parts";
    TESSEL_CHECK(var.type() == value.type())
        << "LetStmt " << var.name() << " of type " << var.type() << " bound to " << value.type();
    auto* n = new_stmt<LetStmt>();
    n->var = std::move(var);
    n->value = std::move(value);
    n->body = std::move(body);
    return n;
}

Stmt AttrStmt::make(std::string key, Expr value, Stmt body) {
    TESSEL_CHECK(body.defined()) << "AttrStmt '" << key << "' without a body";
    auto* n = new_stmt<AttrStmt>();
    n->key = std::move(key);
    n->value = std::move(value);
    n->body = std::move(body);
    return n;
}

Stmt AssertStmt::make(Expr condition, std::string message) {
    TESSEL_CHECK(condition.defined() && condition.type() == Bool()) << "AssertStmt condition";
    auto* n = new_stmt<AssertStmt>();
    n->condition = std::move(condition);
    n->message = std::move(message);
    return n;
}

const char* for_kind_name(ForKind k) {
    switch (k) {
        case ForKind::Serial: return "serial";
        case ForKind::Parallel: return "parallel";
        case ForKind::Vectorized: return "vectorized";
        case ForKind::Unrolled: return "unrolled";
        case ForKind::ThreadBound: return "thread_bound";
    }
    return "?";
}

Stmt For::make(Var loop_var, Expr min, Expr extent, ForKind kind, Stmt body,
               std::string thread_tag) {
    TESSEL_CHECK(loop_var.defined() && min.defined() && extent.defined() && body.defined())
        << "For with undefined parts";
    Type t = loop_var.type();
    TESSEL_CHECK(t.is_scalar() && t.is_int_or_uint()) << "For variable of type " << t;
    TESSEL_CHECK(min.type() == t && extent.type() == t)
        << "For " << loop_var.name() << ": min " << min.type() << ", extent " << extent.type()
        << ", variable " << t;
    TESSEL_CHECK((kind == ForKind::ThreadBound) == !thread_tag.empty())
        << "For " << loop_var.name() << ": thread tag '" << thread_tag << "' with kind "
        << for_kind_name(kind);
    auto* n = new_stmt<For>();
    n->loop_var = std::move(loop_var);
    n->min = std::move(min);
    n->extent = std::move(extent);
    n->kind = kind;
    n->thread_tag = std::move(thread_tag);
    n->body = std::move(body);
    return n;
}

Stmt Store::make(Var buffer_var, Expr value, Expr index, Expr predicate) {
    TESSEL_CHECK(buffer_var.defined() && value.defined() && index.defined())
        << "Store with undefined parts";
    TESSEL_CHECK(buffer_var.type().is_handle()) << "Store to non-handle " << buffer_var.name();
    TESSEL_CHECK(index.type().is_int_or_uint() && index.type().lanes == value.type().lanes)
        << "Store of " << value.type() << " with index " << index.type();
    if (predicate.defined())
        TESSEL_CHECK(predicate.type() == Bool(value.type().lanes))
            << "Store predicate " << predicate.type();
    auto* n = new_stmt<Store>();
    n->buffer_var = std::move(buffer_var);
    n->value = std::move(value);
    n->index = std::move(index);
    n->predicate = std::move(predicate);
    return n;
}

Stmt BufferStore::make(Buffer buffer, Expr value, std::vector<Expr> indices) {
    TESSEL_CHECK(buffer.defined() && value.defined()) << "BufferStore with undefined parts";
    TESSEL_CHECK(indices.size() == buffer.shape().size())
        << "buffer " << buffer.name() << " stored with " << indices.size() << " indices";
    TESSEL_CHECK(value.type().element_of() == buffer.dtype())
        << "buffer " << buffer.name() << " of " << buffer.dtype() << " stored a " << value.type();
    for (const Expr& i : indices)
        TESSEL_CHECK(i.defined() && i.type().is_int_or_uint())
            << "buffer " << buffer.name() << " stored with a non-integer index";
    auto* n = new_stmt<BufferStore>();
    n->buffer = std::move(buffer);
    n->value = std::move(value);
    n->indices = std::move(indices);
    return n;
}

Stmt Allocate::make(Var buffer_var, Type dtype, std::vector<Expr> extents, StorageScope scope,
                    Stmt body) {
    TESSEL_CHECK(buffer_var.defined() && body.defined()) << "Allocate with undefined parts";
    TESSEL_CHECK(buffer_var.type().is_handle()) << "Allocate of non-handle " << buffer_var.name();
    for (const Expr& e : extents)
        TESSEL_CHECK(e.defined() && e.type().is_scalar() && e.type().is_int_or_uint())
            << "Allocate " << buffer_var.name() << " with a non-integer extent";
    auto* n = new_stmt<Allocate>();
    n->buffer_var = std::move(buffer_var);
    n->dtype = dtype;
    n->extents = std::move(extents);
    n->scope = scope;
    n->body = std::move(body);
    return n;
}

Stmt Seq::make(std::vector<Stmt> stmts) {
    std::vector<Stmt> flat;
    for (Stmt& s : stmts) {
        TESSEL_CHECK(s.defined()) << "Seq of an undefined statement";
        if (const auto* seq = s.as<Seq>()) {
            flat.insert(flat.end(), seq->stmts.begin(), seq->stmts.end());
        } else {
            flat.push_back(std::move(s));
        }
    }
    TESSEL_CHECK(!flat.empty()) << "empty Seq";
    if (flat.size() == 1) return flat[0];
    auto* n = new_stmt<Seq>();
    n->stmts = std::move(flat);
    return n;
}

Stmt IfThenElse::make(Expr condition, Stmt then_case, Stmt else_case) {
    TESSEL_CHECK(condition.defined() && condition.type() == Bool()) << "IfThenElse condition";
    TESSEL_CHECK(then_case.defined()) << "IfThenElse without a then case";
    auto* n = new_stmt<IfThenElse>();
    n->condition = std::move(condition);
    n->then_case = std::move(then_case);
    n->else_case = std::move(else_case);
    return n;
}

Stmt Evaluate::make(Expr value) {
    TESSEL_CHECK(value.defined()) << "Evaluate of an undefined expression";
    auto* n = new_stmt<Evaluate>();
    n->value = std::move(value);
    return n;
}

}  // namespace tessel
