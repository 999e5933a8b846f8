// Fuzzes the simplifier: random integer and bool expressions evaluate the same before and after
// simplify() on random variable values (negative ones and ones near the type limits included).
// Signed int32/int64 arithmetic is index arithmetic, which the simplifier may assume does not
// overflow (ir/IR.h): an assignment where either side overflows in such a type is not compared
// (and counted); every wrapping type (int8, uint8, uint32) must match exactly, always.
#include <gtest/gtest.h>

#include <random>

#include "IntEval.h"
#include "tessel/arith/Simplify.h"
#include "unit/ArithTestUtil.h"

using namespace tessel;
using tessel::fuzz::i128;
using tessel::fuzz::IntEval;

namespace {

constexpr uint64_t kSeed = 0x7e55e1;
const Type kTypes[] = {Int(32), Int(64), Int(8), UInt(8), UInt(32)};

class Generator {
public:
    explicit Generator(uint64_t seed) : rng_(seed) {
        for (Type t : kTypes) {
            for (const char* name : {"x", "y", "z"}) vars_.push_back(Var(name, t));
        }
    }

    int pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
    const std::vector<Var>& vars() const { return vars_; }

    std::vector<Var> vars_of(Type t) const {
        std::vector<Var> r;
        for (const Var& v : vars_) {
            if (v.type() == t) r.push_back(v);
        }
        return r;
    }

    i128 random_value(Type t) {
        i128 lo = IntEval::type_min(t), hi = IntEval::type_max(t);
        switch (pick(6)) {
            case 0: return lo + pick(3);
            case 1: return hi - pick(3);
            case 2: return IntEval::wrap(t, static_cast<int64_t>(rng_()));
            default: {
                i128 v = pick(41) - 20;
                return v < lo ? lo : v > hi ? hi : v;
            }
        }
    }

    Expr constant(Type t) {
        static const int64_t kSmall[] = {0, 1, 2, 3, 4, 7, 8, 16, -1, -2, -3, -8};
        int64_t v =
            pick(5) == 0 ? static_cast<int64_t>(random_value(t)) : kSmall[pick(std::size(kSmall))];
        return make_const(t, static_cast<int64_t>(IntEval::wrap(t, v)));
    }

    Expr leaf(Type t) {
        if (t.is_bool()) return make_const(t, int64_t(pick(2)));
        if (pick(3) == 0) return constant(t);
        auto vs = vars_of(t);
        return vs[pick(static_cast<int>(vs.size()))];
    }

    Expr integer(Type t, int depth) {
        if (depth <= 0 || pick(5) == 0) return leaf(t);
        int d = depth - 1;
        switch (pick(15)) {
            case 0:
            case 1: return Add::make(integer(t, d), integer(t, d));
            case 2: return Sub::make(integer(t, d), integer(t, d));
            case 3: return Mul::make(integer(t, d), pick(2) ? constant(t) : integer(t, d));
            case 4: return FloorDiv::make(integer(t, d), pick(3) ? constant(t) : integer(t, d));
            case 5: return FloorMod::make(integer(t, d), pick(3) ? constant(t) : integer(t, d));
            case 6: return Div::make(integer(t, d), pick(3) ? constant(t) : integer(t, d));
            case 7: return Mod::make(integer(t, d), pick(3) ? constant(t) : integer(t, d));
            case 8: return Min::make(integer(t, d), integer(t, d));
            case 9: return Max::make(integer(t, d), integer(t, d));
            case 10: return Select::make(boolean(d), integer(t, d), integer(t, d));
            case 11: {
                Type from = kTypes[pick(std::size(kTypes))];
                return from == t ? integer(t, d) : Cast::make(t, integer(from, d));
            }
            case 12: {
                // Linear-looking index arithmetic: x*c + y ...
                return Add::make(Mul::make(integer(t, d), constant(t)), integer(t, d));
            }
            case 13: {
                Var v("t", t);
                return Let::make(v, integer(t, d), Add::make(v, integer(t, d)));
            }
            default: return leaf(t);
        }
    }

    Expr boolean(int depth) {
        if (depth <= 0 || pick(6) == 0) return leaf(Bool());
        int d = depth - 1;
        Type t = kTypes[pick(std::size(kTypes))];
        switch (pick(10)) {
            case 0: return LT::make(integer(t, d), integer(t, d));
            case 1: return LE::make(integer(t, d), integer(t, d));
            case 2: return GT::make(integer(t, d), integer(t, d));
            case 3: return GE::make(integer(t, d), integer(t, d));
            case 4: return EQ::make(integer(t, d), integer(t, d));
            case 5: return NE::make(integer(t, d), integer(t, d));
            case 6: return And::make(boolean(d), boolean(d));
            case 7: return Or::make(boolean(d), boolean(d));
            case 8: return Not::make(boolean(d));
            default: return Select::make(boolean(d), boolean(d), boolean(d));
        }
    }

    Expr expression() {
        int depth = 2 + pick(4);
        if (pick(4) == 0) return boolean(depth);
        return integer(kTypes[pick(std::size(kTypes))], depth);
    }

    std::mt19937_64& rng() { return rng_; }

private:
    std::mt19937_64 rng_;
    std::vector<Var> vars_;
};

struct Stats {
    int compared = 0;
    int skipped = 0;
};

// Evaluates both forms under one assignment; returns false (after reporting) on a mismatch.
bool agree(const Expr& original, const Expr& simplified, const IntEval& base, Stats* stats,
           const std::string& context) {
    IntEval a = base, b = base;
    i128 va = a.eval(original), vb = b.eval(simplified);
    if (a.overflowed || b.overflowed) {
        ++stats->skipped;
        return true;
    }
    ++stats->compared;
    if (va == vb) return true;
    std::ostringstream os;
    for (const auto& [v, val] : base.env)
        os << v->name << ":" << v->type << "=" << int64_t(val) << " ";
    ADD_FAILURE() << context << "\n  original   " << test::show(original) << " = " << int64_t(va)
                  << "\n  simplified " << test::show(simplified) << " = " << int64_t(vb)
                  << "\n  values     " << os.str();
    return false;
}

}  // namespace

TEST(SimplifyFuzz, FreeVariables) {
    Generator gen(kSeed);
    Stats stats;
    constexpr int kExprs = 12000, kAssignments = 8;
    int failures = 0;
    for (int i = 0; i < kExprs && failures < 5; ++i) {
        Expr e = gen.expression();
        Expr s = simplify(e);
        ASSERT_EQ(s.type(), e.type()) << test::show(e);
        for (int k = 0; k < kAssignments; ++k) {
            IntEval ev;
            for (const Var& v : gen.vars()) ev.env[v.get()] = gen.random_value(v.type());
            std::string ctx = "seed " + std::to_string(kSeed) + ", expression " + std::to_string(i);
            if (!agree(e, s, ev, &stats, ctx)) {
                ++failures;
                break;
            }
        }
    }
    std::printf("free variables: %d comparisons, %d skipped (index overflow)\n", stats.compared,
                stats.skipped);
    EXPECT_GT(stats.compared, stats.skipped * 3);
}

TEST(SimplifyFuzz, BoundVariables) {
    Generator gen(kSeed + 1);
    Stats stats;
    constexpr int kExprs = 4000, kAssignments = 6;
    int failures = 0;
    for (int i = 0; i < kExprs && failures < 5; ++i) {
        // Random ranges, some near the type limits; values drawn inside them.
        Analyzer an;
        std::unordered_map<const Variable*, std::pair<i128, i128>> ranges;
        for (const Var& v : gen.vars()) {
            if (gen.pick(4) == 0) continue;
            i128 a = gen.random_value(v.type()), b = gen.random_value(v.type());
            if (gen.pick(2)) b = a + gen.pick(20);
            if (b > IntEval::type_max(v.type())) b = IntEval::type_max(v.type());
            if (a > b) std::swap(a, b);
            ranges[v.get()] = {a, b};
            if (a >= INT64_MIN && b <= INT64_MAX) an.bind(v, int64_t(a), int64_t(b));
        }
        Expr e = gen.expression();
        Expr s = an.simplify(e);
        for (int k = 0; k < kAssignments; ++k) {
            IntEval ev;
            for (const Var& v : gen.vars()) {
                auto it = ranges.find(v.get());
                if (it == ranges.end()) {
                    ev.env[v.get()] = gen.random_value(v.type());
                } else {
                    auto [lo, hi] = it->second;
                    uint64_t span = static_cast<uint64_t>(hi - lo);
                    ev.env[v.get()] =
                        lo + i128(span == UINT64_MAX ? gen.rng()() : gen.rng()() % (span + 1));
                }
            }
            std::string ctx = "seed " + std::to_string(kSeed + 1) + ", bound expression " +
                              std::to_string(i) + ", ranges";
            for (const auto& [v, r] : ranges)
                ctx += " " + v->name + ":" + v->type.str() + " in [" +
                       std::to_string(int64_t(r.first)) + ", " + std::to_string(int64_t(r.second)) +
                       "]";
            if (!agree(e, s, ev, &stats, ctx)) {
                ++failures;
                break;
            }
        }
    }
    std::printf("bound variables: %d comparisons, %d skipped (index overflow)\n", stats.compared,
                stats.skipped);
    EXPECT_GT(stats.compared, stats.skipped * 3);
}
