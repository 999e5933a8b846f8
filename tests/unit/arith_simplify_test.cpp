// Simplifier cases: input, expected output (structural comparison), one per line.
#include <gtest/gtest.h>

#include <cmath>

#include "ArithTestUtil.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/Equality.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"

using namespace tessel;
using tessel::test::same;
using tessel::test::show;

namespace {

struct Case {
    Expr in, expected;
    int line;
};
#define C(in, out)            \
    Case {                    \
        (in), (out), __LINE__ \
    }

void check_cases(const std::vector<Case>& cases, const Analyzer& an = Analyzer(),
                 const SimplifyOptions& options = {}) {
    for (const Case& c : cases) {
        Expr got = an.simplify(c.in, options);
        EXPECT_TRUE(same(got, c.expected))
            << "line " << c.line << ": simplify(" << show(c.in) << ")\n  got      " << show(got)
            << "\n  expected " << show(c.expected);
    }
}

Expr i64(int64_t v) {
    return make_const(Int(64), v);
}
Expr u8(int v) {
    return make_const(UInt(8), int64_t(v));
}
Expr i8(int v) {
    return make_const(Int(8), int64_t(v));
}
Expr f32(double v) {
    return make_const(Float(32), v);
}
Expr T() {
    return const_true();
}
Expr F() {
    return const_false();
}

struct Vars {
    Var x{"x"}, y{"y"}, z{"z"}, w{"w"}, n{"n"};
    Var a{"a", Int(64)}, b{"b", Int(64)};
    Var p{"p", UInt(8)}, q{"q", UInt(8)}, s{"s", Int(8)};
    Var c{"c", Bool()}, d{"d", Bool()};
    Var f{"f", Float(32)}, g{"g", Float(32)};
};

}  // namespace

TEST(ArithSimplify, ConstantFolding) {
    Vars v;
    check_cases({
        C(Expr(3) + 4, Expr(7)),
        C(Expr(3) - 10, Expr(-7)),
        C(Expr(6) * 7, Expr(42)),
        C(Expr(7) / 2, Expr(3)),
        C(Expr(-7) / 2, Expr(-4)),
        C(Expr(-7) % 2, Expr(1)),
        C(truncdiv(Expr(-7), 2), Expr(-3)),
        C(truncmod(Expr(-7), 2), Expr(-1)),
        C(FloorDiv::make(Expr(7), Expr(0)), Expr(0)),
        C(FloorMod::make(Expr(7), Expr(0)), Expr(0)),
        C(Div::make(Expr(INT32_MIN), Expr(-1)), Expr(INT32_MIN)),
        C(Mod::make(Expr(INT32_MIN), Expr(-1)), Expr(0)),
        C(FloorDiv::make(i64(INT64_MIN), i64(-1)), i64(INT64_MIN)),
        C(Expr(INT32_MAX) + 1, Expr(INT32_MIN)),
        C(Expr(INT32_MIN) - 1, Expr(INT32_MAX)),
        C(Expr(65536) * 65536, Expr(0)),
        C(u8(200) + u8(100), u8(44)),
        C(u8(3) - u8(5), u8(254)),
        C(i8(100) + i8(100), i8(-56)),
        C(i8(-128) * i8(-1), i8(-128)),
        C(Div::make(u8(250), u8(7)), u8(35)),
        C(min(Expr(3), 5), Expr(3)),
        C(max(Expr(3), 5), Expr(5)),
        C(max(u8(200), u8(3)), u8(200)),
        C(Expr(3) < 5, T()),
        C(Expr(5) <= 4, F()),
        C(Expr(5) == 5, T()),
        C(Expr(5) != 5, F()),
        C(Expr(5) > 4, T()),
        C(Expr(5) >= 6, F()),
        C(T() && F(), F()),
        C(T() || F(), T()),
        C(!T(), F()),
        C(select(T(), Expr(1), Expr(2)), Expr(1)),
        C(select(F(), v.x, v.y), v.y),
        C(cast(Int(8), Expr(300)), i8(44)),
        C(cast(UInt(8), Expr(-1)), u8(255)),
        C(cast(Int(32), i8(-3)), Expr(-3)),
        C(cast(Int(32), u8(250)), Expr(250)),
        C(cast(Int(32), f32(-3.7)), Expr(-3)),
        C(cast(Int(8), f32(1000.0)), i8(127)),
        C(cast(Int(32), make_const(Float(32), NAN)), Expr(0)),
        C(cast(Float(32), Expr(16777217)), f32(16777216.0)),
        C(f32(0.1) + f32(0.2), f32(double(0.1f + 0.2f))),
        C(f32(1.0) / f32(3.0), f32(double(1.0f / 3.0f))),
        C(Expr(0.1) + Expr(0.2), Expr(0.1 + 0.2)),
        C(min(f32(1.0), make_const(Float(32), NAN)), f32(1.0)),
        C(f32(1.0) < f32(2.0), T()),
        C(make_const(Float(32), NAN) == make_const(Float(32), NAN), F()),
        C(abs(Expr(-5)), Expr(5)),
        C(if_then_else(T(), v.x, v.y), v.x),
        C(Call::make(Intrinsic::likely, {T()}), T()),
    });
}

TEST(ArithSimplify, LinearForms) {
    Vars v;
    Var x = v.x, y = v.y, z = v.z;
    check_cases({
        C(x + 0, x),
        C(0 + x, x),
        C(x - 0, x),
        C(x * 1, x),
        C(1 * x, x),
        C(x * 0, Expr(0)),
        C(x - x, Expr(0)),
        C(3 + x, x + 3),
        C((x + 3) + 4, x + 7),
        C((x + 3) - 5, x - 2),
        C((x * 4 + y) + x * 2, x * 6 + y),
        C(x + y - x, y),
        C(x + y - y, x),
        C((x + y) - (y + x), Expr(0)),
        C(x * 2 + x, x * 3),
        C(x * 3 - x * 3, Expr(0)),
        C((x + 1) * 4, x * 4 + 4),
        C((x * 4 + y) * 8 + z, x * 32 + y * 8 + z),
        C(x - y - (x - y), Expr(0)),
        C(5 - x + x, Expr(5)),
        C(0 - x + y, y - x),
        C(x * 2 - x * 2 + y, y),
        C((x + y) * 2 - y * 2, x * 2),
        C(3 * (x + y) - 3 * x, y * 3),
        C(x - (x / 8) * 8, x % 8),
        C((x / 8) * 8 + x % 8, x),
        C((x + 3) - (x / 4) * 4, x % 4 + 3),
        C(x * y + x * y, (x * y) * 2),
        C(v.a + i64(3) - v.a, i64(3)),
        C(v.p + v.q - v.p, v.q),
        C(v.p * u8(3) + v.p, v.p * u8(4)),
        C(v.s + i8(100) + i8(100), v.s - i8(56)),
        C((x + 1) - (y + 1), x - y),
    });
}

TEST(ArithSimplify, DivMod) {
    Vars v;
    Var x = v.x, y = v.y;
    check_cases({
        C(x / 1, x),
        C(x % 1, Expr(0)),
        C(truncdiv(x, 1), x),
        C(truncmod(x, 1), Expr(0)),
        C(truncdiv(x, -1), 0 - x),
        C(x / -1, 0 - x),
        C((x * 8 + y) / 8, x + y / 8),
        C((x * 8 + y) % 8, y % 8),
        C((x * 8 + 3) % 8, Expr(3)),
        C((x * 8 + 3) / 8, x),
        C((x * 8 + 11) / 8, x + 1),
        C((x * 8 - 1) / 8, x - 1),
        C((x * 8 - 1) % 8, Expr(7)),
        C((x * 16 + y * 8) / 8, x * 2 + y),
        C((x * 16 + y * 8) % 8, Expr(0)),
        C((x / 4) / 8, x / 32),
        C((x % 16) % 8, x % 8),
        C((x * 4) % 2, Expr(0)),
        C((x * 6) / 3, x * 2),
        C((x * 2) / 6, x / 3),
        C((x * 4) % 16, (x % 4) * 4),
        C((x % 8) / 8, Expr(0)),
        C((x % 8) / 16, Expr(0)),
        C(x * 2 % 2, Expr(0)),
        C(v.a * i64(8) / i64(8), v.a),
        C((x * 8 + 4) % 8, Expr(4)),
        // A fused loop's digits recombine: n = x / 49, y = x / 7 % 7, w = x % 7 of a 4 x 7 x 7
        // fusion read at n * 49 + y * 7 + w (Schedule::reindex's copies, InferBounds).
        C((x / 49) * 49 + (x / 7 % 7) * 7 + x % 7, x),
        C((x / 7 % 7) * 7 + (x / 49) * 49 + y + x % 7, y + x),
        C(((x / 6) / 5) * 30 + ((x / 6) % 5) * 6 + x % 6, x),
    });
    // Not when the digits do not belong together.
    for (Expr e : {(x / 50) * 49 + (x / 7 % 7) * 7 + x % 7, (x / 49) * 49 + (x / 7 % 7) * 6 + x % 7,
                   (x / 49) * 49 + (y / 7 % 7) * 7 + x % 7})
        EXPECT_FALSE(structural_equal(simplify(e), x)) << to_string(e);
}

TEST(ArithSimplify, MinMax) {
    Vars v;
    Var x = v.x, y = v.y, z = v.z;
    check_cases({
        C(min(x, x), x),
        C(max(x, x), x),
        C(min(x + 1, x + 3), x + 1),
        C(max(x + 1, x + 3), x + 3),
        C(min(x, x + 5), x),
        C(max(x - 2, x), x),
        C(max(min(x, y), x), x),
        C(min(max(x, y), x), x),
        C(min(x, max(x, y)), x),
        C(min(min(x, 5), 3), min(x, 3)),
        C(max(max(x, 5), 3), max(x, 5)),
        C(min(max(x, 5), 3), Expr(3)),
        C(max(min(x, 3), 5), Expr(5)),
        C(min(min(x, y), x), min(x, y)),
        C(min(x * 4, y * 4), min(x, y) * 4),
        C(max(x * -2, y * -2), 0 - min(x, y) * 2),
        C(min(x + z, y + z), min(x, y) + z),
        C(max(x - z, y - z), max(x, y) - z),
        C(min(x / 4, y / 4), min(x, y) / 4),
        C(min(x, y) + max(x, y), x + y),
        C(min(x, y) - x, min(y - x, 0)),
        C(x - max(x, y), min(x - y, 0)),
        C(min(x + 4, y) - x, min(y - x, 4)),
        C(min(f32(2.0), f32(1.0)), f32(1.0)),
        C(min(v.f, v.f), v.f),
        C(max(v.p, v.p), v.p),
        C(min(v.p, u8(255)), v.p),
        C(max(v.p, u8(0)), v.p),
        C(min(v.s, i8(127)), v.s),
        C(min(x, Expr(INT32_MAX)), x),
    });
}

TEST(ArithSimplify, Comparisons) {
    Vars v;
    Var x = v.x, y = v.y;
    check_cases({
        C(x < x, F()),
        C(x <= x, T()),
        C(x == x, T()),
        C(x != x, F()),
        C(x + 3 < x + 5, T()),
        C(x + 5 <= x + 3, F()),
        C(x * 2 == 3, F()),
        C(x * 2 != 3, T()),
        C(x * 4 + 2 == y * 8, F()),
        C(x + 1 == x, F()),
        C(x > y, y < x),
        C(x >= y, y <= x),
        C(x - y < 0, x < y),
        C(x + 3 < y, x < y - 3),
        C(x * 2 < 8, x < 4),
        C(x * 2 < 7, x < 4),
        C(x * 2 <= 7, x <= 3),
        C(x * 3 == 6, x == 2),
        C(x + 1 <= y + 1, x <= y),
        C(min(x, y) < x, y < x),
        C(x < max(x, y), x < y),
        C(v.p < u8(0), F()),
        C(v.p <= u8(255), T()),
        C(v.p >= u8(0), T()),
        C(cast(Int(32), v.p) < 256, T()),
        C(cast(Int(32), v.s) >= -128, T()),
        C(x % 8 < 8, T()),
        C(x % 8 >= 0, T()),
        C(v.f < v.f, F()),
        C(v.f > v.g, v.g < v.f),
        C(x < 5 && x < 3, x < 3),
        C(x < 5 || x < 3, x < 5),
        C(x < 3 && 5 < x, F()),
        C(x == 1 && x == 2, F()),
    });
}

TEST(ArithSimplify, Booleans) {
    Vars v;
    Var c = v.c, d = v.d, x = v.x, y = v.y;
    check_cases({
        C(c && T(), c),
        C(c && F(), F()),
        C(c || T(), T()),
        C(c || F(), c),
        C(c && c, c),
        C(c || c, c),
        C(c && !c, F()),
        C(c || !c, T()),
        C(!!c, c),
        C(!(x < y), y <= x),
        C(!(x <= y), y < x),
        C(!(x == y), x != y),
        C(!(x != y), x == y),
        C(!(v.f < v.g), !(v.f < v.g)),
        C(c && (c || d), c),
        C(c || (c && d), c),
        C(c == T(), c),
        C(c == F(), !c),
        C(c != F(), c),
        C(select(c, T(), F()), c),
        C(select(c, F(), T()), !c),
        C(select(c, d, F()), c && d),
        C(select(c, T(), d), c || d),
        C(x < y || y <= x, T()),
        C(x < y && y < x, F()),
    });
}

TEST(ArithSimplify, Select) {
    Vars v;
    Var c = v.c, x = v.x, y = v.y, z = v.z;
    check_cases({
        C(select(c, x, x), x),
        C(select(!c, x, y), select(c, y, x)),
        C(select(c, select(c, x, y), z), select(c, x, z)),
        C(select(c, x, select(c, y, z)), select(c, x, z)),
        C(select(x < y, x, y), min(x, y)),
        C(select(x < y, y, x), max(x, y)),
        C(select(c, v.f, v.f), v.f),
        C(select(c, Expr(1), Expr(2)) + 3, select(c, Expr(4), Expr(5))),
        C(if_then_else(c, x, x), x),
        C(if_then_else(F(), x, y), y),
    });
}

TEST(ArithSimplify, Floats) {
    Vars v;
    Var f = v.f;
    Expr neg_zero = make_const(Float(32), -0.0);
    check_cases({
        C(f * f32(1.0), f),
        C(f / f32(1.0), f),
        C(f - f32(0.0), f),
        C(f + neg_zero, f),
        C(f + f32(0.0), f + f32(0.0)),                            // -0.0 + 0.0 is +0.0
        C(f - f, f - f),                                          // NaN, inf
        C(f * f32(0.0), f * f32(0.0)),                            // NaN, -0.0
        C((f + f32(1.0)) + f32(2.0), (f + f32(1.0)) + f32(2.0)),  // no reassociation
        C(cast(Float(64), cast(Float(32), f)), cast(Float(64), f)),
    });
}

TEST(ArithSimplify, CastsAndVectors) {
    Vars v;
    Var x = v.x, y = v.y;
    check_cases({
        C(cast(Int(64), cast(Int(32), v.s)), cast(Int(64), v.s)),
        C(cast(Int(8), cast(Int(16), x)), cast(Int(8), x)),
        C(cast(Int(32), cast(Int(64), x)), x),
        C(cast(Int(32), cast(Int(8), x)), cast(Int(32), cast(Int(8), x))),
        C(cast(Int(64), cast(UInt(8), x)), cast(Int(64), cast(UInt(8), x))),
        C(Broadcast::make(x, 4) + Broadcast::make(y, 4), Broadcast::make(x + y, 4)),
        C(Ramp::make(x, Expr(1), 4) + Broadcast::make(y, 4), Ramp::make(x + y, Expr(1), 4)),
        C(Ramp::make(x, Expr(2), 4) + Ramp::make(y, Expr(3), 4), Ramp::make(x + y, Expr(5), 4)),
        C(Ramp::make(x, Expr(2), 4) * Broadcast::make(Expr(3), 4), Ramp::make(x * 3, Expr(6), 4)),
        C(Ramp::make(x, Expr(0), 4), Broadcast::make(x, 4)),
        C(Ramp::make(x, Expr(1), 4) - Broadcast::make(x, 4), Ramp::make(Expr(0), Expr(1), 4)),
        C(Broadcast::make(x, 4) - Broadcast::make(x, 4), Broadcast::make(Expr(0), 4)),
        C(Broadcast::make(x, 4) < Broadcast::make(x + 1, 4), Broadcast::make(T(), 4)),
        C(cast(Int(64), Broadcast::make(x, 4)), Broadcast::make(cast(Int(64), x), 4)),
    });
}

TEST(ArithSimplify, Let) {
    Vars v;
    Var x = v.x, y = v.y, t("t");
    check_cases({
        C(Let::make(t, Expr(3), t + x), x + 3),
        C(Let::make(t, y, t + x), y + x),
        C(Let::make(t, x * y, x), x),
        C(Let::make(t, x * y, t + t), Let::make(t, x * y, t * 2)),
    });
}

TEST(ArithSimplify, WithBounds) {
    Vars v;
    Var x = v.x, y = v.y, n = v.n;
    Analyzer an;
    an.bind(x, Range(0, 8));
    an.bind(y, 0, 100);
    an.bind(n, Range(1, 64));
    check_cases(
        {
            C(x / 8, Expr(0)),
            C(x % 8, x),
            C(min(x, 10), x),
            C(max(x, 10), Expr(10)),
            C(max(x, -1), x),
            C(x < 10, T()),
            C(x >= 0, T()),
            C(x < 7, x < 7),
            C(x + 8 < 16, T()),
            C((y * 8 + x) / 8, y),
            C((y * 8 + x) % 8, x),
            C(truncdiv(y, 4), y / 4),
            C(truncmod(y, 4), y % 4),
            C((x + 8) / 8, Expr(1)),
            C((x + 8) % 8, x),
            C(y / 128, Expr(0)),
            C(min(y, n), min(y, n)),
            C(max(n, 0), n),
            C(select(x < 8, y, n), y),
            C(x * 4 < 32, T()),
        },
        an);
}

TEST(ArithSimplify, SymbolicBounds) {
    Var x("x"), n("n"), io("io"), ii("ii");
    Analyzer an;
    an.bind(n, Range(1, 100));
    an.bind(x, Interval(Expr(0), n - 1));
    an.bind(ii, Range(0, 32));
    check_cases(
        {
            C(x < n, T()),
            C(min(x, n), x),
            C(max(x, n - 1), n - 1),
            C(x - n < 0, T()),
            C((io * 32 + ii) / 32, io),
            C((io * 32 + ii) % 32, ii),
        },
        an);
}

TEST(ArithSimplify, ModularBindings) {
    Var x("x"), y("y");
    Analyzer an;
    an.bind_modular(x, ModularSet(4, 1));
    check_cases(
        {
            C(x % 4, Expr(1)),
            C(x % 2, Expr(1)),
            C(x == 2, F()),
            C((x + 3) % 4, Expr(0)),
        },
        an);
}

TEST(ArithSimplify, Statements) {
    Var i("i"), j("j"), buf("buf", Handle());
    Stmt st = Store::make(buf, Expr(1.0f), i);
    // extent 1: the loop variable becomes its min
    Stmt s1 = simplify(For::make(i, Expr(3), Expr(1), ForKind::Serial, st));
    const auto* store = s1.as<Store>();
    ASSERT_NE(store, nullptr);
    EXPECT_TRUE(is_const_int(store->index, 3));
    // extent 0: a no-op
    Stmt s0 = simplify(For::make(i, Expr(0), Expr(0), ForKind::Serial, st));
    ASSERT_NE(s0.as<Evaluate>(), nullptr);
    EXPECT_TRUE(is_zero(s0.as<Evaluate>()->value));
    // constant conditions
    Stmt s2 = simplify(IfThenElse::make(Expr(1) < 2, st));
    EXPECT_NE(s2.as<Store>(), nullptr);
    Stmt s3 = simplify(IfThenElse::make(Expr(1) > 2, st));
    EXPECT_NE(s3.as<Evaluate>(), nullptr);
    Stmt s4 = simplify(IfThenElse::make(Expr(1) > 2, st, Store::make(buf, Expr(2.0f), i)));
    ASSERT_NE(s4.as<Store>(), nullptr);
    // assert(true) is dropped; nested Seqs flatten and lose no-ops
    Stmt s5 = simplify(
        Seq::make({AssertStmt::make(Expr(1) < 2, "ok"), st, Seq::make({Evaluate::make(0), st})}));
    const auto* seq = s5.as<Seq>();
    ASSERT_NE(seq, nullptr);
    EXPECT_EQ(seq->stmts.size(), 2u);
    // loop bounds are known in the body
    Stmt loop = For::make(i, Expr(0), Expr(8), ForKind::Serial,
                          Store::make(buf, Expr(1.0f), min(i, 10) + i / 8));
    Stmt s6 = simplify(loop);
    const auto* f6 = s6.as<For>();
    ASSERT_NE(f6, nullptr);
    EXPECT_TRUE(f6->body.as<Store>()->index.same_as(i)) << show(f6->body.as<Store>()->index);
    // a guard that always holds inside the loop goes away
    Stmt s7 =
        simplify(For::make(i, Expr(0), Expr(8), ForKind::Serial, IfThenElse::make(i < 8, st)));
    EXPECT_NE(s7.as<For>()->body.as<Store>(), nullptr);
    // LetStmt of a constant is inlined
    Stmt s8 = simplify(LetStmt::make(j, Expr(5), Store::make(buf, Expr(1.0f), j + 1)));
    ASSERT_NE(s8.as<Store>(), nullptr);
    EXPECT_TRUE(is_const_int(s8.as<Store>()->index, 6));
}

TEST(ArithSimplify, NeverHangs) {
    // A deep expression simplifies in bounded time.
    Var x("x"), y("y");
    Expr e = x;
    for (int k = 0; k < 300; ++k) e = min(e + y, x * 2 - k) + (k % 3 == 0 ? y : x);
    Expr r = simplify(e);
    EXPECT_TRUE(r.defined());
}

// swizzle (storage_swizzle's index, ir/IR.h) moves whole phase cycles (span * phases elements) out
// of its argument when the rest is provably non-negative, and folds constants; the rewrite
// evaluates the same.
TEST(ArithSimplify, Swizzle) {
    Vars v;
    Var y = v.y, z = v.z;
    Analyzer an;
    an.bind(y, 0, 1000);
    auto swz = [](Expr o) {  // 16-byte chunks of halves, rows of 32, 2 rows per phase, 4 phases
        return Call::make(Intrinsic::swizzle, {o, Expr(8), Expr(64), Expr(4)});
    };
    check_cases(
        {
            C(swz(y + 512), swz(y) + 512), C(swz(y + 1024), swz(y) + 1024),
            C(swz(y + 16), swz(y + 16)),    // a column step: changes the XORed chunk
            C(swz(z + 512), swz(z + 512)),  // z may be negative
            C(swz(Expr(72)), Expr(64)),     // row 2, chunk 1: phase 1 makes it chunk 0
            C(swz(y + z * 256 + 16), swz(y + z * 256 + 16)),  // variables stay without the option
        },
        an);
    SimplifyOptions out;  // lowering's last simplification
    out.swizzle_cycles_out = true;
    check_cases(
        {
            // a pipelined loop's stage offset and a whole-cycle coefficient move out too
            C(swz(y + floormod(z, 3) * 512), swz(y) + floormod(z, 3) * 512),
            C(swz(y + z * 256 + 16), swz(y + 16) + z * 256),
            C(swz(y + z * 128), swz(y + z * 128)),              // half a cycle: z picks the phase
            C(swz(y * 256 + z * 512), swz(y * 256 + z * 512)),  // all cycles: the call stays
            C(swz(z + 512), swz(z + 512)),                      // z may be negative
                                            // a drained pipeline's stage offset: the constant's
                                            // whole cycles go out with it
            C(swz(y + z * 256 - 496), swz(y + 16) + z * 256 - 512),
        },
        an, out);
    const BufferSwizzle sw{8, 64, 4};
    for (int64_t x = 0; x < 1000; x += 7) EXPECT_EQ(sw.apply(x + 512), sw.apply(x) + 512) << x;
    for (int64_t x = 0; x < 600; x += 5)  // a negative multiple: x + y stays in the domain
        for (int64_t k = -1; k <= 3; ++k)
            if (x + k * 256 >= 0) {
                EXPECT_EQ(sw.apply(x + k * 256), sw.apply(x) + k * 256) << x;
            }
}
