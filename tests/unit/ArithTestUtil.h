// Helpers for the arithmetic tests: a small printer and a structural comparison (until the
// IR printer and structural_equal land, these keep the tests self-contained).
#pragma once

#include <sstream>
#include <string>

#include "tessel/ir/IR.h"

namespace tessel::test {

inline const char* op_symbol(IRNodeType t) {
    switch (t) {
        case IRNodeType::Add: return " + ";
        case IRNodeType::Sub: return " - ";
        case IRNodeType::Mul: return "*";
        case IRNodeType::Div: return " tdiv ";
        case IRNodeType::Mod: return " tmod ";
        case IRNodeType::FloorDiv: return " / ";
        case IRNodeType::FloorMod: return " % ";
        case IRNodeType::EQ: return " == ";
        case IRNodeType::NE: return " != ";
        case IRNodeType::LT: return " < ";
        case IRNodeType::LE: return " <= ";
        case IRNodeType::GT: return " > ";
        case IRNodeType::GE: return " >= ";
        case IRNodeType::And: return " && ";
        case IRNodeType::Or: return " || ";
        default: return nullptr;
    }
}

template <typename T>
bool binary_parts(const Expr& e, Expr* a, Expr* b) {
    if (const T* op = e.as<T>()) {
        *a = op->a;
        *b = op->b;
        return true;
    }
    return false;
}

inline bool any_binary(const Expr& e, Expr* a, Expr* b) {
    return binary_parts<Add>(e, a, b) || binary_parts<Sub>(e, a, b) || binary_parts<Mul>(e, a, b) ||
           binary_parts<Div>(e, a, b) || binary_parts<Mod>(e, a, b) ||
           binary_parts<FloorDiv>(e, a, b) || binary_parts<FloorMod>(e, a, b) ||
           binary_parts<Min>(e, a, b) || binary_parts<Max>(e, a, b) || binary_parts<EQ>(e, a, b) ||
           binary_parts<NE>(e, a, b) || binary_parts<LT>(e, a, b) || binary_parts<LE>(e, a, b) ||
           binary_parts<GT>(e, a, b) || binary_parts<GE>(e, a, b) || binary_parts<And>(e, a, b) ||
           binary_parts<Or>(e, a, b);
}

inline void print(std::ostream& os, const Expr& e) {
    if (!e.defined()) {
        os << "<undef>";
        return;
    }
    Expr a, b;
    if (const auto* i = e.as<IntImm>()) {
        if (e.type().is_bool())
            os << (i->value ? "true" : "false");
        else
            os << i->value;
        if (e.type() != Int(32) && !e.type().is_bool()) os << "_" << e.type();
    } else if (const auto* u = e.as<UIntImm>()) {
        os << u->value << "_" << e.type();
    } else if (const auto* f = e.as<FloatImm>()) {
        os << f->value << "_" << e.type();
    } else if (const auto* v = e.as<Variable>()) {
        os << v->name;
    } else if (any_binary(e, &a, &b)) {
        if (const char* s = op_symbol(e.node_type())) {
            os << "(";
            print(os, a);
            os << s;
            print(os, b);
            os << ")";
        } else {
            os << (e.as<Min>() ? "min(" : "max(");
            print(os, a);
            os << ", ";
            print(os, b);
            os << ")";
        }
    } else if (const auto* n = e.as<Not>()) {
        os << "!";
        print(os, n->a);
    } else if (const auto* s = e.as<Select>()) {
        os << "select(";
        print(os, s->condition);
        os << ", ";
        print(os, s->true_value);
        os << ", ";
        print(os, s->false_value);
        os << ")";
    } else if (const auto* c = e.as<Cast>()) {
        os << e.type() << "(";
        print(os, c->value);
        os << ")";
    } else if (const auto* r = e.as<Ramp>()) {
        os << "ramp(";
        print(os, r->base);
        os << ", ";
        print(os, r->stride);
        os << ", " << r->lanes << ")";
    } else if (const auto* bc = e.as<Broadcast>()) {
        os << "x" << bc->lanes << "(";
        print(os, bc->value);
        os << ")";
    } else if (const auto* l = e.as<Let>()) {
        os << "(let " << l->var.name() << " = ";
        print(os, l->value);
        os << " in ";
        print(os, l->body);
        os << ")";
    } else if (const auto* call = e.as<Call>()) {
        os << intrinsic_name(call->op) << "(";
        for (size_t i = 0; i < call->args.size(); ++i) {
            if (i) os << ", ";
            print(os, call->args[i]);
        }
        os << ")";
    } else {
        os << "<" << node_type_name(e.node_type()) << ">";
    }
}

inline std::string show(const Expr& e) {
    std::ostringstream os;
    print(os, e);
    return os.str();
}

/// Structural equality, variables by identity.
inline bool same(const Expr& x, const Expr& y) {
    if (x.same_as(y)) return true;
    if (!x.defined() || !y.defined()) return false;
    if (x.node_type() != y.node_type() || x.type() != y.type()) return false;
    Expr a1, b1, a2, b2;
    if (any_binary(x, &a1, &b1)) {
        any_binary(y, &a2, &b2);
        return same(a1, a2) && same(b1, b2);
    }
    if (const auto* i = x.as<IntImm>()) return i->value == y.as<IntImm>()->value;
    if (const auto* u = x.as<UIntImm>()) return u->value == y.as<UIntImm>()->value;
    if (const auto* f = x.as<FloatImm>()) return f->value == y.as<FloatImm>()->value;
    if (const auto* n = x.as<Not>()) return same(n->a, y.as<Not>()->a);
    if (const auto* c = x.as<Cast>()) return same(c->value, y.as<Cast>()->value);
    if (const auto* s = x.as<Select>()) {
        const auto* t = y.as<Select>();
        return same(s->condition, t->condition) && same(s->true_value, t->true_value) &&
               same(s->false_value, t->false_value);
    }
    if (const auto* r = x.as<Ramp>()) {
        const auto* t = y.as<Ramp>();
        return r->lanes == t->lanes && same(r->base, t->base) && same(r->stride, t->stride);
    }
    if (const auto* b = x.as<Broadcast>()) return same(b->value, y.as<Broadcast>()->value);
    if (const auto* l = x.as<Let>()) {
        const auto* t = y.as<Let>();
        return l->var.same_as(t->var) && same(l->value, t->value) && same(l->body, t->body);
    }
    if (const auto* c = x.as<Call>()) {
        const auto* t = y.as<Call>();
        if (c->op != t->op || c->args.size() != t->args.size()) return false;
        for (size_t i = 0; i < c->args.size(); ++i) {
            if (!same(c->args[i], t->args[i])) return false;
        }
        return true;
    }
    return false;
}

}  // namespace tessel::test
