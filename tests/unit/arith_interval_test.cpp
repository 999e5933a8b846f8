// Symbolic interval analysis and proofs by bounds.
#include <gtest/gtest.h>

#include "ArithTestUtil.h"
#include "tessel/arith/Interval.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IROperator.h"

using namespace tessel;
using tessel::test::same;
using tessel::test::show;

namespace {
void expect_interval(const Interval& got, const Expr& lo, const Expr& hi, int line) {
    EXPECT_TRUE(same(got.min, lo))
        << "line " << line << ": min " << show(got.min) << ", expected " << show(lo);
    EXPECT_TRUE(same(got.max, hi))
        << "line " << line << ": max " << show(got.max) << ", expected " << show(hi);
}
#define EXPECT_INTERVAL(i, lo, hi) expect_interval((i), (lo), (hi), __LINE__)
}  // namespace

TEST(ArithInterval, Constants) {
    Var x("x"), y("y");
    Scope s{{x.get(), Interval(Expr(0), Expr(7))}, {y.get(), Interval(Expr(-3), Expr(5))}};
    EXPECT_INTERVAL(bounds_of(Expr(4), s), Expr(4), Expr(4));
    EXPECT_INTERVAL(bounds_of(x, s), Expr(0), Expr(7));
    EXPECT_INTERVAL(bounds_of(x + y, s), Expr(-3), Expr(12));
    EXPECT_INTERVAL(bounds_of(x - y, s), Expr(-5), Expr(10));
    EXPECT_INTERVAL(bounds_of(x * 3, s), Expr(0), Expr(21));
    EXPECT_INTERVAL(bounds_of(x * -2, s), Expr(-14), Expr(0));
    EXPECT_INTERVAL(bounds_of(x * y, s), Expr(-21), Expr(35));
    EXPECT_INTERVAL(bounds_of(x / 2, s), Expr(0), Expr(3));
    EXPECT_INTERVAL(bounds_of(y / 2, s), Expr(-2), Expr(2));
    EXPECT_INTERVAL(bounds_of(y % 4, s), Expr(0), Expr(3));
    EXPECT_INTERVAL(bounds_of(x % 8, s), Expr(0), Expr(7));
    EXPECT_INTERVAL(bounds_of((x + 8) % 8, s), Expr(0), Expr(7));
    EXPECT_INTERVAL(bounds_of(min(x, y), s), Expr(-3), Expr(5));
    EXPECT_INTERVAL(bounds_of(max(x, y), s), Expr(0), Expr(7));
    EXPECT_INTERVAL(bounds_of(select(x < y, x, y + 10), s), Expr(0), Expr(15));
    EXPECT_INTERVAL(bounds_of(cast(Int(64), x), s), make_const(Int(64), int64_t(0)),
                    make_const(Int(64), int64_t(7)));
    EXPECT_INTERVAL(bounds_of(abs(y), s), Expr(0), Expr(5));
    EXPECT_INTERVAL(bounds_of(truncmod(y, 4), s), Expr(-3), Expr(3));
}

TEST(ArithInterval, Symbolic) {
    Var io("io"), ii("ii"), i("i"), n("n"), m("m"), j("j");
    Scope s{{ii.get(), Interval(Expr(0), Expr(31))},
            {i.get(), Interval(Expr(0), n - 1)},
            {j.get(), Interval(m, m + 3)}};
    EXPECT_INTERVAL(bounds_of(io * 32 + ii, s), io * 32, io * 32 + 31);
    EXPECT_INTERVAL(bounds_of(i / 4, s), Expr(0), (n - 1) / 4);
    EXPECT_INTERVAL(bounds_of(j - m, s), Expr(0), Expr(3));
    EXPECT_INTERVAL(bounds_of(j * 2, s), m * 2, m * 2 + 6);
    EXPECT_INTERVAL(bounds_of(i % 16, s), Expr(0), min(n - 1, 15));
    // Unknown sign: min/max of the four products.
    Interval p = bounds_of(j * n, s);
    EXPECT_TRUE(p.is_bounded());
    // Ramps and broadcasts: over all lanes.
    EXPECT_INTERVAL(bounds_of(Ramp::make(ii, Expr(2), 4), s), Expr(0), Expr(37));
    EXPECT_INTERVAL(bounds_of(Broadcast::make(io, 4), s), io, io);
    // Let: the bound value flows into the body.
    Var t("t");
    EXPECT_INTERVAL(bounds_of(Let::make(t, ii * 2, t + 1), s), Expr(1), Expr(63));
}

TEST(ArithInterval, Unbounded) {
    Var x("x"), f("f", Float(32)), buf("buf", Handle());
    Scope s{{x.get(), Interval(Expr(0), Expr())}};
    Interval a = bounds_of(x + 1, s);
    EXPECT_TRUE(is_const_int(a.min, 1));
    EXPECT_FALSE(a.has_upper_bound());
    Interval l = bounds_of(Load::make(Int(8), buf, x), s);
    EXPECT_TRUE(is_const_int(l.min, -128) && is_const_int(l.max, 127));
    Interval fl = bounds_of(Load::make(Float(32), buf, x), s);
    EXPECT_TRUE(fl.is_everything());
    Interval e = bounds_of(x * x, s);
    EXPECT_TRUE(is_const_int(e.min, 0));
    // uint8 arithmetic that could wrap covers the whole type.
    Var p("p", UInt(8));
    Scope su{
        {p.get(), Interval(make_const(UInt(8), int64_t(200)), make_const(UInt(8), int64_t(250)))}};
    Interval w = bounds_of(p + make_const(UInt(8), int64_t(10)), su);
    EXPECT_TRUE(is_const_int(w.min, 0) && is_const_int(w.max, 255));
    Interval ok = bounds_of(p - make_const(UInt(8), int64_t(100)), su);
    EXPECT_TRUE(is_const_int(ok.min, 100) && is_const_int(ok.max, 150));
}

TEST(ArithInterval, UnionIntersect) {
    Var n("n");
    Interval a(Expr(0), Expr(10)), b(Expr(5), Expr(20));
    EXPECT_INTERVAL(interval_union(a, b), Expr(0), Expr(20));
    EXPECT_INTERVAL(interval_intersect(a, b), Expr(5), Expr(10));
    Interval c(Expr(), n);
    Interval u = interval_union(a, c);
    EXPECT_FALSE(u.has_lower_bound());
    EXPECT_TRUE(same(u.max, max(n, 10)));
    EXPECT_INTERVAL(interval_intersect(a, c), Expr(0), min(n, 10));
    EXPECT_TRUE(Interval::single_point(n).is_single_point());
    EXPECT_TRUE(Interval::everything().is_everything());
    EXPECT_INTERVAL(Interval::from_range(Range(n, Expr(4))), n, n + 3);
}

TEST(ArithInterval, ConstBounds) {
    Var i("i"), n("n");
    Scope s{{n.get(), Interval(Expr(1), Expr(100))}, {i.get(), Interval(Expr(0), n - 1)}};
    ConstInterval c = const_bounds_of(i, s);
    ASSERT_TRUE(c.min && c.max);
    EXPECT_EQ(*c.min, 0);
    EXPECT_EQ(*c.max, 99);
    ConstInterval d = const_bounds_of(i - n, s);
    ASSERT_TRUE(d.max);
    EXPECT_EQ(*d.max, -1);
}

TEST(ArithProve, CanProve) {
    Var x("x"), n("n"), io("io"), ii("ii"), y("y");
    Scope s{{n.get(), Interval(Expr(1), Expr(100))},
            {x.get(), Interval(Expr(0), n - 1)},
            {ii.get(), Interval(Expr(0), Expr(31))},
            {io.get(), Interval(Expr(0), Expr(3))}};
    EXPECT_TRUE(can_prove(x < n, s));
    EXPECT_TRUE(can_prove(x <= n - 1, s));
    EXPECT_TRUE(can_prove(x >= 0, s));
    EXPECT_TRUE(can_prove(n > x, s));
    EXPECT_FALSE(can_prove(x < n - 1, s));
    EXPECT_FALSE(can_prove(x > 0, s));
    EXPECT_TRUE(can_prove(io * 32 + ii < 128, s));
    EXPECT_TRUE(can_prove(io * 32 + ii >= 0, s));
    EXPECT_FALSE(can_prove(io * 32 + ii < 127, s));
    EXPECT_TRUE(can_prove(x < n && ii < 32, s));
    EXPECT_TRUE(can_prove(x < 0 || ii < 32, s));
    EXPECT_TRUE(can_prove(ii % 8 < 8, s));
    EXPECT_TRUE(can_prove(ii / 8 <= 3, s));
    EXPECT_TRUE(can_prove(y + 1 > y, s));
    EXPECT_FALSE(can_prove(y > 0, s));
    EXPECT_TRUE(can_prove(!(x >= n), s));
    EXPECT_TRUE(can_prove(x != n, s));
    EXPECT_FALSE(can_prove(x == 3, s));
    Analyzer an;
    an.bind(n, Range(1, 100));
    an.bind(x, Interval(Expr(0), n - 1));
    EXPECT_TRUE(an.can_prove(x < n));
    EXPECT_TRUE(an.can_prove(x * 2 < n * 2));
}

TEST(ArithInterval, VectorsHaveScalarBoundsOverTheirLanes) {
    // Regression (schedule fuzzer, argmax): bounds of a vector load minus a broadcast constant
    // mixed a vector end with a scalar one.
    Var k("k"), buf("buf", Handle()), lanes_var("v", Int(32, 4));
    Expr load = Load::make(Int(32, 4), buf, Ramp::make(Expr(0), Expr(1), 4));
    Scope scope;
    scope[k.get()] = Interval(Expr(0), Expr(4));
    Interval b = bounds_of(Sub::make(load, Broadcast::make(Expr(7), 4)), scope);
    EXPECT_TRUE(!b.min.defined() || b.min.type().is_scalar());
    Interval r = bounds_of(Add::make(Broadcast::make(k, 4), Broadcast::make(Expr(3), 4)), scope);
    ASSERT_TRUE(r.is_bounded());
    EXPECT_EQ(as_const_int(r.min), 3);
    EXPECT_EQ(as_const_int(r.max), 7);
    Interval v = bounds_of(lanes_var + Broadcast::make(Expr(1), 4), scope);
    EXPECT_TRUE(!v.max.defined() || v.max.type().is_scalar());
    EXPECT_FALSE(can_prove(
        LT::make(Broadcast::make(k, 4), Sub::make(load, Broadcast::make(Expr(7), 4))), scope));
}
