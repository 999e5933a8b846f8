// Matching, predicate evaluation and instantiation of rewrite-rule patterns.
#include "PatternMatch.h"

#include <cmath>

#include "ConstFold.h"
#include "ExprEqual.h"
#include "IntMath.h"

namespace tessel::internal {

Pat::Pat(int v) : Pat(int64_t(v)) {}
Pat::Pat(int64_t v) : node_(make_pat(PatOp::IntLit, IRNodeType::IntImm, {}, {}, {}, 0, v).node_) {}

Pat::Pat(double v) {
    auto n = std::make_shared<PatNode>();
    n->op = PatOp::FloatLit;
    n->fvalue = v;
    node_ = std::move(n);
}

Pat make_pat(PatOp op, IRNodeType node, Pat a, Pat b, Pat c, int index, int64_t value) {
    auto n = std::make_shared<PatNode>();
    n->op = op;
    n->node = node;
    n->index = index;
    n->value = value;
    n->a = std::move(a);
    n->b = std::move(b);
    n->c = std::move(c);
    return Pat(std::shared_ptr<const PatNode>(std::move(n)));
}

namespace pattern {
const Pat x = make_pat(PatOp::Wild, IRNodeType::IntImm, {}, {}, {}, 0);
const Pat y = make_pat(PatOp::Wild, IRNodeType::IntImm, {}, {}, {}, 1);
const Pat z = make_pat(PatOp::Wild, IRNodeType::IntImm, {}, {}, {}, 2);
const Pat w = make_pat(PatOp::Wild, IRNodeType::IntImm, {}, {}, {}, 3);
const Pat c0 = make_pat(PatOp::ConstWild, IRNodeType::IntImm, {}, {}, {}, 0);
const Pat c1 = make_pat(PatOp::ConstWild, IRNodeType::IntImm, {}, {}, {}, 1);
const Pat c2 = make_pat(PatOp::ConstWild, IRNodeType::IntImm, {}, {}, {}, 2);
const Pat c3 = make_pat(PatOp::ConstWild, IRNodeType::IntImm, {}, {}, {}, 3);
const Pat true_p = make_pat(PatOp::BoolLit, IRNodeType::IntImm, {}, {}, {}, 0, 1);
const Pat false_p = make_pat(PatOp::BoolLit, IRNodeType::IntImm, {}, {}, {}, 0, 0);
const Pat no_overflow = make_pat(PatOp::NoOverflow);
const Pat type_max = make_pat(PatOp::TypeMax);
const Pat type_min = make_pat(PatOp::TypeMin);
}  // namespace pattern

#define TESSEL_PAT_BINARY(fn, T)                           \
    Pat fn(const Pat& a, const Pat& b) {                   \
        return make_pat(PatOp::Node, IRNodeType::T, a, b); \
    }
TESSEL_PAT_BINARY(operator+, Add)
TESSEL_PAT_BINARY(operator-, Sub)
TESSEL_PAT_BINARY(operator*, Mul)
TESSEL_PAT_BINARY(operator/, Div)
TESSEL_PAT_BINARY(operator%, Mod)
TESSEL_PAT_BINARY(operator<, LT)
TESSEL_PAT_BINARY(operator<=, LE)
TESSEL_PAT_BINARY(operator>, GT)
TESSEL_PAT_BINARY(operator>=, GE)
TESSEL_PAT_BINARY(operator==, EQ)
TESSEL_PAT_BINARY(operator!=, NE)
TESSEL_PAT_BINARY(operator&&, And)
TESSEL_PAT_BINARY(operator||, Or)
TESSEL_PAT_BINARY(min, Min)
TESSEL_PAT_BINARY(max, Max)
TESSEL_PAT_BINARY(floordiv, FloorDiv)
TESSEL_PAT_BINARY(floormod, FloorMod)
TESSEL_PAT_BINARY(truncdiv, Div)
TESSEL_PAT_BINARY(truncmod, Mod)
#undef TESSEL_PAT_BINARY

Pat operator!(const Pat& a) {
    return make_pat(PatOp::Node, IRNodeType::Not, a);
}
Pat select(const Pat& c, const Pat& t, const Pat& f) {
    return make_pat(PatOp::Node, IRNodeType::Select, c, t, f);
}
Pat ramp(const Pat& base, const Pat& stride) {
    return make_pat(PatOp::Node, IRNodeType::Ramp, base, stride);
}
Pat broadcast(const Pat& value) {
    return make_pat(PatOp::Node, IRNodeType::Broadcast, value);
}
Pat fold(const Pat& a) {
    return make_pat(PatOp::Fold, IRNodeType::IntImm, a);
}
Pat lower(const Pat& wild) {
    return make_pat(PatOp::Lower, IRNodeType::IntImm, wild);
}
Pat upper(const Pat& wild) {
    return make_pat(PatOp::Upper, IRNodeType::IntImm, wild);
}
Pat mod_coeff(const Pat& wild) {
    return make_pat(PatOp::ModCoeff, IRNodeType::IntImm, wild);
}
Pat mod_base(const Pat& wild) {
    return make_pat(PatOp::ModBase, IRNodeType::IntImm, wild);
}
Pat prove(const Pat& cond) {
    return make_pat(PatOp::Prove, IRNodeType::IntImm, cond);
}
Pat is_int(const Pat& wild) {
    return make_pat(PatOp::IsInt, IRNodeType::IntImm, wild);
}

Rule rule(Pat lhs, Pat rhs, Pat pred, std::source_location loc) {
    TESSEL_CHECK(lhs.defined() && lhs->op == PatOp::Node) << "rule at line " << loc.line();
    return Rule{std::move(lhs), std::move(rhs), std::move(pred), static_cast<int>(loc.line())};
}

// ---------------------------------------------------------------------------------------------
// Matching (backtracking over commutative operand orders)

namespace {

/// A non-owning reference to a continuation `bool(MatchState&)`.
class Cont {
public:
    template <typename F>
    Cont(F& f)  // NOLINT
        : obj_(&f), fn_([](void* o, MatchState& m) { return (*static_cast<F*>(o))(m); }) {}
    bool operator()(MatchState& m) const { return fn_(obj_, m); }

private:
    void* obj_;
    bool (*fn_)(void*, MatchState&);
};

bool is_commutative(IRNodeType t) {
    switch (t) {
        case IRNodeType::Add:
        case IRNodeType::Mul:
        case IRNodeType::Min:
        case IRNodeType::Max:
        case IRNodeType::EQ:
        case IRNodeType::NE:
        case IRNodeType::And:
        case IRNodeType::Or: return true;
        default: return false;
    }
}

bool match(const PatNode* p, const Expr& e, MatchState& m, Cont k);

bool match_lanes(int lanes, MatchState& m) {
    if (m.lanes != 0 && m.lanes != lanes) return false;
    m.lanes = lanes;
    return true;
}

bool match_pair(const PatNode* pa, const Expr& ea, const PatNode* pb, const Expr& eb, MatchState& m,
                Cont k) {
    MatchState saved = m;
    auto second = [&](MatchState& m2) { return match(pb, eb, m2, k); };
    if (match(pa, ea, m, second)) return true;
    m = saved;
    return false;
}

bool match_node(const PatNode* p, const Expr& e, MatchState& m, Cont k) {
    if (e.node_type() != p->node) return false;
    const Expr *a, *b;
    if (binary_operands(e, &a, &b)) {
        if (match_pair(p->a.get(), *a, p->b.get(), *b, m, k)) return true;
        return is_commutative(p->node) && match_pair(p->a.get(), *b, p->b.get(), *a, m, k);
    }
    switch (p->node) {
        case IRNodeType::Not: return match(p->a.get(), e.as<Not>()->a, m, k);
        case IRNodeType::Select: {
            const auto* op = e.as<Select>();
            auto rest = [&](MatchState& m2) {
                return match_pair(p->b.get(), op->true_value, p->c.get(), op->false_value, m2, k);
            };
            return match(p->a.get(), op->condition, m, rest);
        }
        case IRNodeType::Ramp: {
            const auto* op = e.as<Ramp>();
            if (!match_lanes(op->lanes, m)) return false;
            return match_pair(p->a.get(), op->base, p->b.get(), op->stride, m, k);
        }
        case IRNodeType::Broadcast: {
            const auto* op = e.as<Broadcast>();
            if (!match_lanes(op->lanes, m)) return false;
            return match(p->a.get(), op->value, m, k);
        }
        default: return false;
    }
}

bool match(const PatNode* p, const Expr& e, MatchState& m, Cont k) {
    switch (p->op) {
        case PatOp::Wild: {
            Expr& slot = m.wild[p->index];
            if (slot.defined()) return expr_equal(slot, e) && k(m);
            slot = e;
            if (k(m)) return true;
            slot = Expr();
            return false;
        }
        case PatOp::ConstWild: {
            if (e.type().is_float() || e.type().is_bool()) return false;
            auto v = as_const_int(e);
            if (!v) return false;
            int i = p->index;
            if (m.has_c[i]) return m.cval[i] == *v && m.ctype[i] == e.type() && k(m);
            m.has_c[i] = true, m.cval[i] = *v, m.ctype[i] = e.type();
            if (k(m)) return true;
            m.has_c[i] = false;
            return false;
        }
        case PatOp::IntLit:
            return !e.type().is_float() && !e.type().is_bool() && is_const_int(e, p->value) && k(m);
        case PatOp::BoolLit: return e.type().is_bool() && is_const_int(e, p->value) && k(m);
        case PatOp::FloatLit: {
            auto f = as_const_float(e);
            return f && *f == p->fvalue && std::signbit(*f) == std::signbit(p->fvalue) && k(m);
        }
        case PatOp::Node: return match_node(p, e, m, k);
        default: return false;
    }
}

// ---------------------------------------------------------------------------------------------
// Instantiation

std::optional<Type> infer(const PatNode* p, const MatchState& m) {
    switch (p->op) {
        case PatOp::Wild: return m.wild[p->index].type();
        case PatOp::ConstWild: return m.ctype[p->index];
        case PatOp::Fold: return infer(p->a.get(), m);
        case PatOp::Node: break;
        default: return std::nullopt;
    }
    switch (p->node) {
        case IRNodeType::EQ:
        case IRNodeType::NE:
        case IRNodeType::LT:
        case IRNodeType::LE:
        case IRNodeType::GT:
        case IRNodeType::GE: {
            auto t = infer(p->a.get(), m);
            if (!t) t = infer(p->b.get(), m);
            if (t) return Bool(t->lanes);
            return std::nullopt;
        }
        case IRNodeType::Not: return infer(p->a.get(), m);
        case IRNodeType::Select: {
            auto t = infer(p->b.get(), m);
            return t ? t : infer(p->c.get(), m);
        }
        case IRNodeType::Ramp: {
            auto t = infer(p->a.get(), m);
            if (!t) t = infer(p->b.get(), m);
            if (t) return t->with_lanes(m.lanes);
            return std::nullopt;
        }
        case IRNodeType::Broadcast: {
            auto t = infer(p->a.get(), m);
            if (t) return t->with_lanes(m.lanes);
            return std::nullopt;
        }
        default: {
            auto t = infer(p->a.get(), m);
            return t ? t : infer(p->b.get(), m);
        }
    }
}

Type operand_type(const PatNode* p, const MatchState& m, Type fallback) {
    auto t = infer(p->a.get(), m);
    if (!t && p->b.defined()) t = infer(p->b.get(), m);
    return t ? *t : fallback;
}

Expr build(const PatNode* p, const MatchState& m, Type hint);

Expr build_node(const PatNode* p, const MatchState& m, Type hint) {
    switch (p->node) {
        case IRNodeType::EQ:
        case IRNodeType::NE:
        case IRNodeType::LT:
        case IRNodeType::LE:
        case IRNodeType::GT:
        case IRNodeType::GE: {
            Type t = operand_type(p, m, m.operand_type);
            return make_binary(p->node, build(p->a.get(), m, t), build(p->b.get(), m, t));
        }
        case IRNodeType::Not: return Not::make(build(p->a.get(), m, hint));
        case IRNodeType::Select: {
            auto vt = infer(p->b.get(), m);
            if (!vt) vt = infer(p->c.get(), m);
            Type t = vt ? *vt : hint;
            Expr c = build(p->a.get(), m, Bool(t.lanes));
            return Select::make(c, build(p->b.get(), m, t), build(p->c.get(), m, t));
        }
        case IRNodeType::Ramp: {
            Type t = operand_type(p, m, hint.element_of()).element_of();
            return Ramp::make(build(p->a.get(), m, t), build(p->b.get(), m, t), m.lanes);
        }
        case IRNodeType::Broadcast:
            return Broadcast::make(build(p->a.get(), m, hint.element_of()), m.lanes);
        default: {
            Type t = operand_type(p, m, hint);
            return make_binary(p->node, build(p->a.get(), m, t), build(p->b.get(), m, t));
        }
    }
}

Expr build(const PatNode* p, const MatchState& m, Type hint) {
    switch (p->op) {
        case PatOp::Wild: return m.wild[p->index];
        case PatOp::ConstWild: return make_const(m.ctype[p->index], m.cval[p->index]);
        case PatOp::IntLit: return make_const(hint, p->value);
        case PatOp::FloatLit: return make_const(hint, p->fvalue);
        case PatOp::BoolLit: return make_const(Bool(hint.lanes), p->value);
        case PatOp::Node: return build_node(p, m, hint);
        case PatOp::Fold: return const_fold_tree(build(p->a.get(), m, hint));
        default: TESSEL_CHECK(false) << "predicate-only pattern in a rewrite";
    }
    return Expr();
}

// ---------------------------------------------------------------------------------------------
// Predicates, evaluated exactly on 128 bits; nullopt means "unknown" (the rule does not fire).

std::optional<int128> eval(const PatNode* p, const MatchState& m, RuleContext& ctx);

std::optional<int128> eval_node(const PatNode* p, const MatchState& m, RuleContext& ctx) {
    if (p->node == IRNodeType::And || p->node == IRNodeType::Or) {
        bool is_and = p->node == IRNodeType::And;
        auto a = eval(p->a.get(), m, ctx);
        bool av = a && *a != 0;
        if (is_and ? !av : av) return int128(av);
        auto b = eval(p->b.get(), m, ctx);
        return int128(b && *b != 0);
    }
    if (p->node == IRNodeType::Not) {
        auto a = eval(p->a.get(), m, ctx);
        if (!a) return std::nullopt;
        return int128(*a == 0);
    }
    auto a = eval(p->a.get(), m, ctx), b = eval(p->b.get(), m, ctx);
    if (!a || !b) return std::nullopt;
    switch (p->node) {
        case IRNodeType::Add: return *a + *b;
        case IRNodeType::Sub: return *a - *b;
        case IRNodeType::Mul: return *a * *b;
        case IRNodeType::Div: return *b == 0 ? std::nullopt : std::optional<int128>(*a / *b);
        case IRNodeType::Mod: return *b == 0 ? std::nullopt : std::optional<int128>(*a % *b);
        case IRNodeType::FloorDiv:
            return *b == 0 ? std::nullopt : std::optional<int128>(div_floor128(*a, *b));
        case IRNodeType::FloorMod:
            if (*b == 0) return std::nullopt;
            return *a - div_floor128(*a, *b) * *b;
        case IRNodeType::Min: return std::min(*a, *b);
        case IRNodeType::Max: return std::max(*a, *b);
        case IRNodeType::EQ: return int128(*a == *b);
        case IRNodeType::NE: return int128(*a != *b);
        case IRNodeType::LT: return int128(*a < *b);
        case IRNodeType::LE: return int128(*a <= *b);
        case IRNodeType::GT: return int128(*a > *b);
        case IRNodeType::GE: return int128(*a >= *b);
        default: return std::nullopt;
    }
}

std::optional<int128> eval(const PatNode* p, const MatchState& m, RuleContext& ctx) {
    auto wild = [&]() -> const Expr& { return m.wild[p->a->index]; };
    switch (p->op) {
        case PatOp::IntLit:
        case PatOp::BoolLit: return int128(p->value);
        case PatOp::ConstWild: return int128(m.cval[p->index]);
        case PatOp::Node: return eval_node(p, m, ctx);
        case PatOp::Lower: {
            auto b = ctx.const_bounds(wild()).min;
            return b ? std::optional<int128>(*b) : std::nullopt;
        }
        case PatOp::Upper: {
            auto b = ctx.const_bounds(wild()).max;
            return b ? std::optional<int128>(*b) : std::nullopt;
        }
        case PatOp::ModCoeff: return int128(ctx.modular(wild()).coeff);
        case PatOp::ModBase: return int128(ctx.modular(wild()).base);
        case PatOp::Prove: return int128(ctx.prove(build(p->a.get(), m, Bool(1))));
        case PatOp::NoOverflow: return int128(assumes_no_overflow(m.operand_type));
        case PatOp::TypeMax: return type_max128(m.operand_type);
        case PatOp::TypeMin: return type_min128(m.operand_type);
        case PatOp::IsInt: return int128(!wild().type().is_float());
        default: return std::nullopt;
    }
}

}  // namespace

Expr apply_rule(const Rule& r, const Expr& e, RuleContext& ctx) {
    MatchState m;
    const Expr *a, *b;
    m.operand_type = binary_operands(e, &a, &b) ? a->type() : e.type();
    Expr result;
    auto accept = [&](MatchState& st) {
        if (r.pred.defined()) {
            auto v = eval(r.pred.get(), st, ctx);
            if (!v || *v == 0) return false;
        }
        result = build(r.rhs.get(), st, e.type());
        return true;
    };
    match(r.lhs.get(), e, m, accept);
    return result;
}

}  // namespace tessel::internal
