#include "ExprEqual.h"

#include <cmath>

namespace tessel::internal {

bool binary_operands(const Expr& e, const Expr** a, const Expr** b) {
    switch (e.node_type()) {
#define TESSEL_BINARY_CASE(T)       \
    case IRNodeType::T: {           \
        const auto* op = e.as<T>(); \
        *a = &op->a;                \
        *b = &op->b;                \
        return true;                \
    }
        TESSEL_BINARY_CASE(Add)
        TESSEL_BINARY_CASE(Sub)
        TESSEL_BINARY_CASE(Mul)
        TESSEL_BINARY_CASE(Div) TESSEL_BINARY_CASE(Mod) TESSEL_BINARY_CASE(FloorDiv)
            TESSEL_BINARY_CASE(FloorMod) TESSEL_BINARY_CASE(Min) TESSEL_BINARY_CASE(Max)
                TESSEL_BINARY_CASE(EQ) TESSEL_BINARY_CASE(NE) TESSEL_BINARY_CASE(LT)
                    TESSEL_BINARY_CASE(LE) TESSEL_BINARY_CASE(GT) TESSEL_BINARY_CASE(GE)
                        TESSEL_BINARY_CASE(And) TESSEL_BINARY_CASE(Or)
#undef TESSEL_BINARY_CASE
                            default : return false;
    }
}

Expr make_binary(IRNodeType t, Expr a, Expr b) {
    switch (t) {
#define TESSEL_MAKE_CASE(T) \
    case IRNodeType::T: return T::make(std::move(a), std::move(b));
        TESSEL_MAKE_CASE(Add)
        TESSEL_MAKE_CASE(Sub)
        TESSEL_MAKE_CASE(Mul)
            TESSEL_MAKE_CASE(Div) TESSEL_MAKE_CASE(Mod) TESSEL_MAKE_CASE(FloorDiv)
                TESSEL_MAKE_CASE(FloorMod) TESSEL_MAKE_CASE(Min) TESSEL_MAKE_CASE(Max)
                    TESSEL_MAKE_CASE(EQ) TESSEL_MAKE_CASE(NE) TESSEL_MAKE_CASE(LT)
                        TESSEL_MAKE_CASE(LE) TESSEL_MAKE_CASE(GT) TESSEL_MAKE_CASE(GE)
                            TESSEL_MAKE_CASE(And) TESSEL_MAKE_CASE(Or)
#undef TESSEL_MAKE_CASE
                                default : TESSEL_CHECK(false)
                                          << "make_binary of "
                                          << node_type_name(t);
    }
    return Expr();
}

namespace {
bool all_equal(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (!expr_equal(a[i], b[i])) return false;
    }
    return true;
}

bool same_node_equal(const Expr& a, const Expr& b) {
    const Expr *a0, *a1, *b0, *b1;
    if (binary_operands(a, &a0, &a1)) {
        binary_operands(b, &b0, &b1);
        return expr_equal(*a0, *b0) && expr_equal(*a1, *b1);
    }
    switch (a.node_type()) {
        case IRNodeType::IntImm: return a.as<IntImm>()->value == b.as<IntImm>()->value;
        case IRNodeType::UIntImm: return a.as<UIntImm>()->value == b.as<UIntImm>()->value;
        case IRNodeType::FloatImm: {
            double x = a.as<FloatImm>()->value, y = b.as<FloatImm>()->value;
            return x == y ? std::signbit(x) == std::signbit(y) : (x != x && y != y);
        }
        case IRNodeType::Variable: return false;  // identity was checked by the caller
        case IRNodeType::Cast: return expr_equal(a.as<Cast>()->value, b.as<Cast>()->value);
        case IRNodeType::Not: return expr_equal(a.as<Not>()->a, b.as<Not>()->a);
        case IRNodeType::Select: {
            const auto *x = a.as<Select>(), *y = b.as<Select>();
            return expr_equal(x->condition, y->condition) &&
                   expr_equal(x->true_value, y->true_value) &&
                   expr_equal(x->false_value, y->false_value);
        }
        case IRNodeType::Ramp: {
            const auto *x = a.as<Ramp>(), *y = b.as<Ramp>();
            return x->lanes == y->lanes && expr_equal(x->base, y->base) &&
                   expr_equal(x->stride, y->stride);
        }
        case IRNodeType::Broadcast:
            return expr_equal(a.as<Broadcast>()->value, b.as<Broadcast>()->value);
        case IRNodeType::Let: {
            const auto *x = a.as<Let>(), *y = b.as<Let>();
            return x->var.same_as(y->var) && expr_equal(x->value, y->value) &&
                   expr_equal(x->body, y->body);
        }
        case IRNodeType::Call: {
            const auto *x = a.as<Call>(), *y = b.as<Call>();
            return x->op == y->op && intrinsic_is_pure(x->op) && all_equal(x->args, y->args);
        }
        case IRNodeType::TensorRead: {
            const auto *x = a.as<TensorRead>(), *y = b.as<TensorRead>();
            return x->tensor.same_as(y->tensor) && all_equal(x->indices, y->indices);
        }
        case IRNodeType::Load: {
            const auto *x = a.as<Load>(), *y = b.as<Load>();
            return x->buffer_var.same_as(y->buffer_var) && expr_equal(x->index, y->index) &&
                   expr_equal(x->predicate, y->predicate);
        }
        case IRNodeType::BufferLoad: {
            const auto *x = a.as<BufferLoad>(), *y = b.as<BufferLoad>();
            return x->buffer.same_as(y->buffer) && all_equal(x->indices, y->indices);
        }
        default: return false;  // Reduce: by identity only
    }
}
}  // namespace

bool expr_equal(const Expr& a, const Expr& b) {
    if (a.same_as(b)) return true;
    if (!a.defined() || !b.defined()) return false;
    if (a.node_type() != b.node_type() || a.type() != b.type()) return false;
    return same_node_equal(a, b);
}

}  // namespace tessel::internal
