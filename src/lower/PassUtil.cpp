#include "PassUtil.h"

#include "tessel/ir/IRVisitor.h"

namespace tessel::internal {

Stmt make_noop_stmt() {
    return Evaluate::make(0);
}

bool is_noop_stmt(const Stmt& s) {
    const auto* e = s.as<Evaluate>();
    return e && e->value.as<IntImm>() != nullptr;
}

Stmt call_stmt(Intrinsic op, std::vector<Expr> args) {
    return Evaluate::make(Call::make(op, std::move(args)));
}

bool is_call_stmt(const Stmt& s, Intrinsic op) {
    const auto* e = s.as<Evaluate>();
    const auto* c = e ? e->value.as<Call>() : nullptr;
    return c && c->op == op;
}

Stmt barrier_stmt() {
    return call_stmt(Intrinsic::thread_barrier);
}

bool is_barrier_stmt(const Stmt& s) {
    return is_call_stmt(s, Intrinsic::thread_barrier);
}

namespace {

/// Both operands are scalar integer constants of one type: their values.
bool both_const(const Expr& a, const Expr& b, int64_t* x, int64_t* y) {
    if (!a.as<IntImm>() || !b.as<IntImm>()) return false;
    *x = a.as<IntImm>()->value;
    *y = b.as<IntImm>()->value;
    return true;
}

}  // namespace

Expr fold_add(const Expr& a, const Expr& b) {
    int64_t x, y;
    if (both_const(a, b, &x, &y)) return make_const(a.type(), x + y);
    if (is_zero(b)) return a;
    if (is_zero(a)) return b;
    return Add::make(a, b);
}

Expr fold_sub(const Expr& a, const Expr& b) {
    int64_t x, y;
    if (both_const(a, b, &x, &y)) return make_const(a.type(), x - y);
    if (is_zero(b)) return a;
    return Sub::make(a, b);
}

Expr fold_mul(const Expr& a, const Expr& b) {
    int64_t x, y;
    if (both_const(a, b, &x, &y)) return make_const(a.type(), x * y);
    if (is_one(b)) return a;
    if (is_one(a)) return b;
    if (is_zero(b)) return b;
    if (is_zero(a)) return a;
    return Mul::make(a, b);
}

Expr cast_index(Type t, const Expr& e) {
    t = t.with_lanes(e.type().lanes);
    if (e.type() == t) return e;
    if (const auto* imm = e.as<IntImm>()) return make_const(t, imm->value);
    return Cast::make(t, e);
}

Type wider_index_type(Type a, Type b) {
    a = a.element_of();
    b = b.element_of();
    if (a == b) return a;
    return a.bits >= b.bits ? a : b;
}

Expr fold_product(const std::vector<Expr>& extents, Type t) {
    Expr p = make_one(t);
    for (const Expr& e : extents) p = fold_mul(p, cast_index(t, e));
    return p;
}

Expr strip_likely(const Expr& c) {
    const auto* call = c.as<Call>();
    if (call && call->op == Intrinsic::likely) return strip_likely(call->args[0]);
    return c;
}

void split_conjuncts(const Expr& c, std::vector<Expr>* out) {
    Expr e = strip_likely(c);
    if (const auto* a = e.as<And>()) {
        split_conjuncts(a->a, out);
        split_conjuncts(a->b, out);
    } else {
        out->push_back(e);
    }
}

Expr lane_of(const Expr& e, int k) {
    if (e.type().is_scalar()) return e;
    if (const auto* r = e.as<Ramp>())
        return fold_add(r->base, fold_mul(r->stride, make_const(r->stride.type(), k)));
    if (const auto* b = e.as<Broadcast>()) return b->value;
    if (const auto* c = e.as<Cast>()) {
        Expr v = lane_of(c->value, k);
        return v.defined() ? Cast::make(c->type.element_of(), v) : Expr();
    }
    if (const auto* l = e.as<Load>()) {
        Expr i = lane_of(l->index, k);
        if (!i.defined() || l->predicate.defined()) return Expr();
        return Load::make(l->type.element_of(), l->buffer_var, i);
    }
    if (const auto* c = e.as<Call>(); c && c->op == Intrinsic::swizzle) {
        Expr a = lane_of(c->args[0], k);
        return a.defined() ? Call::make(c->op, {a, c->args[1], c->args[2], c->args[3]}) : Expr();
    }
    if (const auto* n = e.as<Not>()) {
        Expr a = lane_of(n->a, k);
        return a.defined() ? Not::make(a) : Expr();
    }
#define TESSEL_LANE_BINARY(T)                                       \
    if (const auto* op = e.as<T>()) {                               \
        Expr a = lane_of(op->a, k), b = lane_of(op->b, k);          \
        return a.defined() && b.defined() ? T::make(a, b) : Expr(); \
    }
    TESSEL_LANE_BINARY(Add)
    TESSEL_LANE_BINARY(Sub)
    TESSEL_LANE_BINARY(Mul)
    TESSEL_LANE_BINARY(Div)
    TESSEL_LANE_BINARY(Mod)
    TESSEL_LANE_BINARY(FloorDiv)
    TESSEL_LANE_BINARY(FloorMod)
    TESSEL_LANE_BINARY(Min)
    TESSEL_LANE_BINARY(Max)
    TESSEL_LANE_BINARY(EQ)
    TESSEL_LANE_BINARY(NE)
    TESSEL_LANE_BINARY(LT)
    TESSEL_LANE_BINARY(LE)
    TESSEL_LANE_BINARY(GT)
    TESSEL_LANE_BINARY(GE)
    TESSEL_LANE_BINARY(And)
    TESSEL_LANE_BINARY(Or)
#undef TESSEL_LANE_BINARY
    return Expr();
}

bool has_thread_sync(const Stmt& s) {
    bool sync = false;
    post_order_visit(s, [&](const IRNode* n) {
        if (n->node_type != IRNodeType::Call) return;
        Intrinsic op = static_cast<const Call*>(n)->op;
        sync = sync || op == Intrinsic::thread_barrier || op == Intrinsic::thread_allreduce;
    });
    return sync;
}

bool allreduce_within_warps(const int64_t dims[3], const std::vector<int>& axes) {
    int mask = 0;
    int64_t group = 1, total = 1;
    for (int a = 0; a < 3; ++a) {
        if (dims[a] < 1) return false;
        total *= dims[a];
    }
    for (int a : axes) {
        if (a < 0 || a > 2) return false;
        mask |= 1 << a;
        group *= dims[a];
    }
    bool consecutive = mask == 1 || mask == 3;
    bool power_of_two = (group & (group - 1)) == 0;
    bool warps_full = total % kWarpSize == 0 || total < kWarpSize;
    return consecutive && power_of_two && group <= kWarpSize && warps_full;
}

}  // namespace tessel::internal
