// An exact evaluator of integer and bool expressions for the fuzz tests, written from ir/IR.h's
// semantics independently of the simplifier: add/sub/mul wrap; Div/Mod truncate, FloorDiv/
// FloorMod floor; x / 0 = x % 0 = 0; INT_MIN / -1 = INT_MIN; casts truncate or extend.
// It also reports whether a signed int32/int64 add, sub, mul or division (INT_MIN / -1)
// overflowed mathematically (index arithmetic, which the simplifier may assume does not).
#pragma once

#include <stdexcept>
#include <unordered_map>

#include "tessel/ir/IR.h"

namespace tessel::fuzz {

using i128 = __int128;

class IntEval {
public:
    std::unordered_map<const Variable*, i128> env;  ///< mathematical values
    bool overflowed = false;

    /// The mathematical value of `e` (within its type's range).
    i128 eval(const Expr& e) {
        Type t = e.type();
        if (const auto* i = e.as<IntImm>()) return i->value;
        if (const auto* u = e.as<UIntImm>()) return i128(u->value);
        if (const auto* v = e.as<Variable>()) {
            auto it = env.find(v);
            if (it == env.end()) throw std::runtime_error("unbound variable " + v->name);
            return it->second;
        }
        if (const auto* op = e.as<Add>()) return arith(t, eval(op->a) + eval(op->b));
        if (const auto* op = e.as<Sub>()) return arith(t, eval(op->a) - eval(op->b));
        if (const auto* op = e.as<Mul>()) return arith(t, eval(op->a) * eval(op->b));
        if (const auto* op = e.as<Div>()) return arith(t, tdiv(eval(op->a), eval(op->b)));
        if (const auto* op = e.as<Mod>()) return wrap(t, tmod(eval(op->a), eval(op->b)));
        if (const auto* op = e.as<FloorDiv>()) return arith(t, fdiv(eval(op->a), eval(op->b)));
        if (const auto* op = e.as<FloorMod>()) return wrap(t, fmod(eval(op->a), eval(op->b)));
        if (const auto* op = e.as<Min>()) return std::min(eval(op->a), eval(op->b));
        if (const auto* op = e.as<Max>()) return std::max(eval(op->a), eval(op->b));
        if (const auto* op = e.as<EQ>()) return eval(op->a) == eval(op->b);
        if (const auto* op = e.as<NE>()) return eval(op->a) != eval(op->b);
        if (const auto* op = e.as<LT>()) return eval(op->a) < eval(op->b);
        if (const auto* op = e.as<LE>()) return eval(op->a) <= eval(op->b);
        if (const auto* op = e.as<GT>()) return eval(op->a) > eval(op->b);
        if (const auto* op = e.as<GE>()) return eval(op->a) >= eval(op->b);
        if (const auto* op = e.as<And>()) {
            i128 a = eval(op->a), b = eval(op->b);  // both sides are evaluated
            return a != 0 && b != 0;
        }
        if (const auto* op = e.as<Or>()) {
            i128 a = eval(op->a), b = eval(op->b);
            return a != 0 || b != 0;
        }
        if (const auto* op = e.as<Not>()) return eval(op->a) == 0;
        if (const auto* op = e.as<Select>()) {
            i128 c = eval(op->condition), a = eval(op->true_value), b = eval(op->false_value);
            return c != 0 ? a : b;
        }
        if (const auto* op = e.as<Cast>()) {
            i128 v = eval(op->value);
            if (t.is_bool()) return v != 0;
            return wrap(t, v);
        }
        if (const auto* op = e.as<Let>()) {
            i128 v = eval(op->value);
            auto saved = env.find(op->var.get()) != env.end()
                             ? std::optional<i128>(env[op->var.get()])
                             : std::nullopt;
            env[op->var.get()] = v;
            i128 r = eval(op->body);
            if (saved)
                env[op->var.get()] = *saved;
            else
                env.erase(op->var.get());
            return r;
        }
        if (const auto* op = e.as<Call>()) {
            if (op->op == Intrinsic::if_then_else)
                return eval(op->args[0]) != 0 ? eval(op->args[1]) : eval(op->args[2]);
            if (op->op == Intrinsic::likely) return eval(op->args[0]);
            if (op->op == Intrinsic::abs) {
                i128 v = eval(op->args[0]);
                return wrap(t, v < 0 ? -v : v);
            }
        }
        throw std::runtime_error(std::string("IntEval: unsupported node ") +
                                 node_type_name(e.node_type()));
    }

    static i128 type_min(Type t) {
        if (t.is_uint() || t.is_bool()) return 0;
        return -(i128(1) << (t.bits - 1));
    }
    static i128 type_max(Type t) {
        if (t.is_bool()) return 1;
        if (t.is_uint()) return (i128(1) << t.bits) - 1;
        return (i128(1) << (t.bits - 1)) - 1;
    }
    /// Wraps a mathematical value into t's range (two's complement).
    static i128 wrap(Type t, i128 v) {
        if (t.is_bool()) return v != 0;
        i128 m = i128(1) << t.bits;
        v %= m;
        if (v < 0) v += m;
        if (t.is_int() && v > type_max(t)) v -= m;
        return v;
    }

private:
    i128 arith(Type t, i128 v) {
        if (t.is_int() && t.bits >= 32 && (v < type_min(t) || v > type_max(t))) overflowed = true;
        return wrap(t, v);
    }
    static i128 tdiv(i128 a, i128 b) { return b == 0 ? 0 : a / b; }
    static i128 tmod(i128 a, i128 b) { return b == 0 ? 0 : a % b; }
    static i128 fdiv(i128 a, i128 b) {
        if (b == 0) return 0;
        i128 q = a / b;
        if (a % b != 0 && ((a < 0) != (b < 0))) --q;
        return q;
    }
    static i128 fmod(i128 a, i128 b) { return b == 0 ? 0 : a - fdiv(a, b) * b; }
};

}  // namespace tessel::fuzz
