// IROperator.h: the checked operators the DSL and passes build expressions with.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"

using namespace tessel;

TEST(IROperator, MixedDtypesThrowDSLError) {
    Var i("i"), l("l", Int(64)), f("f", Float(32)), h16("h", Float(16)), u("u", UInt(32));
    EXPECT_THROW(i + f, DSLError);
    EXPECT_THROW(f * h16, DSLError);
    EXPECT_THROW(i - l, DSLError);
    EXPECT_THROW(i < u, DSLError);
    EXPECT_THROW(min(i, f), DSLError);
    EXPECT_THROW(select(i < 0, i, f), DSLError);
    EXPECT_THROW(pow(f, h16), DSLError);
    try {
        (void)(i + f);
    } catch (const DSLError& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("int32"), std::string::npos) << msg;
        EXPECT_NE(msg.find("float32"), std::string::npos) << msg;
    }
}

TEST(IROperator, LiteralsAdaptToTheOtherOperand) {
    Var f("f", Float(32)), h("h", Float(16)), l("l", Int(64)), b("b", Int(8)), u("u", UInt(8));
    Expr e = f + 1;
    ASSERT_TRUE(e.as<Add>());
    EXPECT_EQ(e.type(), Float(32));
    EXPECT_EQ(e.as<Add>()->b.type(), Float(32));
    EXPECT_EQ(as_const_float(e.as<Add>()->b), 1.0);
    EXPECT_EQ((2.5 * f).type(), Float(32));  // a double literal becomes float32
    EXPECT_EQ(as_const_float((h + 0.1).as<Add>()->b), 0.0999755859375);  // rounded to float16
    EXPECT_EQ((l + 1).as<Add>()->b.type(), Int(64));
    EXPECT_EQ((1 - l).as<Sub>()->a.type(), Int(64));
    EXPECT_EQ((b * 127).type(), Int(8));
    EXPECT_EQ((u + 255).type(), UInt(8));
    EXPECT_EQ((l < 3).type(), Bool());
    EXPECT_THROW(b + 128, DSLError);              // does not fit int8
    EXPECT_THROW(u + -1, DSLError);               // does not fit uint8
    EXPECT_THROW(l + 1.5, DSLError);              // a float literal never becomes an integer
    EXPECT_THROW(Expr(1) + Expr(1.5), DSLError);  // two literals of different types
}

TEST(IROperator, ScalarsBroadcastAgainstVectors) {
    Var v("v", Float(32, 4)), s("s", Float(32)), w("w", Float(32, 8));
    Expr e = v * s;
    EXPECT_EQ(e.type(), Float(32, 4));
    ASSERT_TRUE(e.as<Mul>()->b.as<Broadcast>());
    Expr lit = v + 1;
    EXPECT_EQ(lit.type(), Float(32, 4));
    EXPECT_EQ(to_string(lit), "v + broadcast(1.0f, 4)");
    EXPECT_THROW(v + w, DSLError);
    EXPECT_EQ((v < s).type(), Bool(4));
}

TEST(IROperator, DivisionAndModulo) {
    Var a("a"), b("b"), f("f", Float(32)), g("g", Float(32));
    EXPECT_TRUE((a / b).as<FloorDiv>());
    EXPECT_TRUE((a % b).as<FloorMod>());
    EXPECT_TRUE((f / g).as<Div>());
    EXPECT_TRUE((a / 4).as<FloorDiv>());
    EXPECT_TRUE(truncdiv(a, b).as<Div>());
    EXPECT_TRUE(truncmod(a, b).as<Mod>());
    EXPECT_TRUE(floordiv(f, g).as<FloorDiv>());
    EXPECT_TRUE(floormod(a, b).as<FloorMod>());
    EXPECT_TRUE(truncmod(f, g).as<Mod>());
    EXPECT_THROW(f % g, DSLError);
    EXPECT_THROW(a / 0, DSLError);
    EXPECT_THROW(a % 0, DSLError);
    EXPECT_THROW(truncdiv(a, 0), DSLError);
    EXPECT_THROW(floormod(a, 0), DSLError);
    EXPECT_NO_THROW(f / 0.0f);  // float division by zero is IEEE, not an error
}

TEST(IROperator, BoolsAndLogic) {
    Var a("a"), b("b");
    Expr p = a < b, q = a == b;
    EXPECT_TRUE((p && q).as<And>());
    EXPECT_TRUE((p || q).as<Or>());
    EXPECT_TRUE((!p).as<Not>());
    EXPECT_THROW(a && p, DSLError);
    EXPECT_THROW(p || a, DSLError);
    EXPECT_THROW(!a, DSLError);
    EXPECT_THROW(p + q, DSLError);  // arithmetic on bool
    EXPECT_THROW(-p, DSLError);
    EXPECT_THROW(select(a, a, b), DSLError);
    EXPECT_THROW(select(const_true(4), a, b), DSLError);
    EXPECT_EQ((p == q).type(), Bool());
}

TEST(IROperator, UnaryMinus) {
    Var a("a"), f("f", Float(32));
    EXPECT_EQ(as_const_int(-Expr(5)), -5);
    EXPECT_EQ(as_const_float(-Expr(2.5f)), -2.5);
    Expr n = -a;
    ASSERT_TRUE(n.as<Sub>());
    EXPECT_TRUE(is_zero(n.as<Sub>()->a));
    EXPECT_EQ((-f).type(), Float(32));
    EXPECT_THROW(-Expr(), DSLError);
}

TEST(IROperator, Casts) {
    Var a("a"), v("v", Int(32, 4));
    EXPECT_TRUE(cast(Int(32), a).same_as(a));  // no-op cast
    EXPECT_EQ(cast(Float(32), a).type(), Float(32));
    EXPECT_EQ(cast(Float(16), v).type(), Float(16, 4));  // lanes follow the value
    EXPECT_THROW(cast(Float(32, 8), v), DSLError);
    EXPECT_THROW(cast(Handle(), a), DSLError);
    EXPECT_THROW(cast(Int(32), Var("h", Handle())), DSLError);
    EXPECT_THROW(cast(Int(32), Expr()), DSLError);
}

TEST(IROperator, Intrinsics) {
    Var f("f", Float(32)), i("i"), u("u", UInt(8));
    EXPECT_EQ(exp(f).as<Call>()->op, Intrinsic::exp);
    EXPECT_EQ(pow(f, 2).as<Call>()->args[1].type(), Float(32));  // literal adapts
    EXPECT_EQ(fma(f, f, 1.0).type(), Float(32));
    EXPECT_EQ(isnan(f).type(), Bool());
    EXPECT_TRUE(abs(u).same_as(u));
    EXPECT_EQ(abs(i).as<Call>()->op, Intrinsic::abs);
    EXPECT_THROW(exp(i), DSLError);
    EXPECT_THROW(sqrt(i), DSLError);
    EXPECT_THROW(abs(i < 2), DSLError);
    EXPECT_THROW(log(Expr()), DSLError);
    Expr ite = if_then_else(i < 4, f, 0);
    EXPECT_EQ(ite.as<Call>()->op, Intrinsic::if_then_else);
    EXPECT_EQ(ite.type(), Float(32));
    EXPECT_THROW(if_then_else(i, f, f), DSLError);
}

TEST(IROperator, Limits) {
    EXPECT_EQ(as_const_int(max_value(Int(8))), 127);
    EXPECT_EQ(as_const_int(min_value(Int(8))), -128);
    EXPECT_EQ(as_const_int(min_value(UInt(16))), 0);
    EXPECT_EQ(max_value(UInt(64)).as<UIntImm>()->value, std::numeric_limits<uint64_t>::max());
    EXPECT_EQ(as_const_float(max_value(Float(16))), 65504.0);
    EXPECT_EQ(as_const_float(min_value(Float(32))), -double(std::numeric_limits<float>::max()));
    EXPECT_EQ(as_const_float(max_value(BFloat(16))), 3.3895313892515355e38);
    EXPECT_EQ(max_value(Int(32, 4)).type(), Int(32, 4));
    EXPECT_TRUE(std::isinf(*as_const_float(inf_value(Float(16)))));
    EXPECT_THROW(inf_value(Int(32)), DSLError);
}

TEST(IROperator, HandlesAndUndefinedOperands) {
    Var h("h", Handle()), i("i");
    EXPECT_THROW(h + i, DSLError);
    EXPECT_THROW(h + 1, DSLError);
    EXPECT_THROW(i + Expr(), DSLError);
    EXPECT_THROW(Expr() < i, DSLError);
}
