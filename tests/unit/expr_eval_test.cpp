// The expression evaluator against the semantics of ir/IR.h, node by node, in both float modes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "tessel/ir/ExprEval.h"
#include "tessel/ir/IROperator.h"

using namespace tessel;

namespace {

int64_t eval_int(const Expr& e) {
    return evaluate_expr(e).as_int();
}
double eval_ideal(const Expr& e) {
    return evaluate_expr(e, {}, FloatMode::Ideal).as_double();
}
double eval_exact(const Expr& e) {
    return evaluate_expr(e, {}, FloatMode::Exact).as_double();
}
Expr i8(int64_t v) {
    return make_const(Int(8), v);
}
Expr i32(int64_t v) {
    return make_const(Int(32), v);
}
Expr u8(int64_t v) {
    return make_const(UInt(8), v);
}
Expr f32(double v) {
    return make_const(Float(32), v);
}

}  // namespace

TEST(ExprEval, Constants) {
    EXPECT_EQ(eval_int(i32(-7)), -7);
    EXPECT_EQ(evaluate_expr(UIntImm::make(UInt(64), ~uint64_t(0))).as_uint(), ~uint64_t(0));
    EXPECT_EQ(eval_ideal(make_const(Float(64), 2.5)), 2.5);
    EXPECT_TRUE(evaluate_expr(const_true()).as_bool());
    Value v = evaluate_expr(make_const(Int(32, 4), int64_t(3)));
    ASSERT_EQ(v.lane_count(), 4);
    EXPECT_EQ(v.as_int(3), 3);
}

TEST(ExprEval, VariablesAndUnbound) {
    Var x("x"), y("y", Float(32));
    ExprEvaluator ev;
    ev.bind_int(x, 5);
    ev.bind_float(y, 0.25);
    EXPECT_EQ(ev.eval(x * 3 + 1).as_int(), 16);
    EXPECT_EQ(ev.eval(y * 2.0f).as_double(), 0.5);
    ev.unbind(x);
    try {
        ev.eval(x + 1);
        FAIL() << "expected RuntimeError";
    } catch (const RuntimeError& e) {
        EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
    }
}

TEST(ExprEval, IntegerWraparound) {
    EXPECT_EQ(eval_int(Add::make(i8(127), i8(1))), -128);
    EXPECT_EQ(eval_int(Sub::make(i8(-128), i8(1))), 127);
    EXPECT_EQ(eval_int(Mul::make(i8(64), i8(4))), 0);
    EXPECT_EQ(eval_int(Mul::make(i8(100), i8(3))), 44);  // 300 - 256
    EXPECT_EQ(eval_int(Add::make(u8(255), u8(2))), 1);
    EXPECT_EQ(eval_int(Sub::make(u8(0), u8(1))), 255);
    EXPECT_EQ(eval_int(Add::make(i32(INT32_MAX), i32(1))), INT32_MIN);
    Expr big = make_const(Int(64), std::numeric_limits<int64_t>::max());
    EXPECT_EQ(eval_int(Add::make(big, make_const(Int(64), int64_t(1)))),
              std::numeric_limits<int64_t>::min());
    Expr umax = UIntImm::make(UInt(64), ~uint64_t(0));
    EXPECT_EQ(evaluate_expr(Add::make(umax, UIntImm::make(UInt(64), 2))).as_uint(), 1u);
}

TEST(ExprEval, TruncVersusFloorDivision) {
    EXPECT_EQ(eval_int(Div::make(i32(-7), i32(2))), -3);
    EXPECT_EQ(eval_int(Mod::make(i32(-7), i32(2))), -1);
    EXPECT_EQ(eval_int(FloorDiv::make(i32(-7), i32(2))), -4);
    EXPECT_EQ(eval_int(FloorMod::make(i32(-7), i32(2))), 1);
    EXPECT_EQ(eval_int(Div::make(i32(7), i32(-2))), -3);
    EXPECT_EQ(eval_int(Mod::make(i32(7), i32(-2))), 1);
    EXPECT_EQ(eval_int(FloorDiv::make(i32(7), i32(-2))), -4);
    EXPECT_EQ(eval_int(FloorMod::make(i32(7), i32(-2))), -1);
    EXPECT_EQ(eval_int(FloorDiv::make(i32(-8), i32(2))), -4);
    EXPECT_EQ(eval_int(FloorMod::make(i32(-8), i32(2))), 0);
    EXPECT_EQ(eval_int(FloorDiv::make(i32(-7), i32(-2))), 3);
    EXPECT_EQ(eval_int(FloorMod::make(i32(-7), i32(-2))), -1);
    EXPECT_EQ(eval_int(FloorDiv::make(u8(200), u8(7))), 28);
    EXPECT_EQ(eval_int(FloorMod::make(u8(200), u8(7))), 4);
}

TEST(ExprEval, DivisionByZeroAndOverflow) {
    for (auto make : {&Div::make, &Mod::make, &FloorDiv::make, &FloorMod::make}) {
        EXPECT_EQ(eval_int(make(i32(5), i32(0))), 0);
        EXPECT_EQ(eval_int(make(u8(5), u8(0))), 0);
    }
    EXPECT_EQ(eval_int(Div::make(i32(INT32_MIN), i32(-1))), INT32_MIN);
    EXPECT_EQ(eval_int(FloorDiv::make(i32(INT32_MIN), i32(-1))), INT32_MIN);
    EXPECT_EQ(eval_int(Mod::make(i32(INT32_MIN), i32(-1))), 0);
    EXPECT_EQ(eval_int(Div::make(i8(-128), i8(-1))), -128);
    Expr mn = make_const(Int(64), std::numeric_limits<int64_t>::min());
    Expr m1 = make_const(Int(64), int64_t(-1));
    EXPECT_EQ(eval_int(Div::make(mn, m1)), std::numeric_limits<int64_t>::min());
    EXPECT_EQ(eval_int(FloorMod::make(mn, m1)), 0);
}

TEST(ExprEval, FloatArithmetic) {
    EXPECT_EQ(eval_ideal(Div::make(f32(1), f32(4))), 0.25);
    EXPECT_EQ(eval_ideal(Mod::make(f32(-7), f32(2))), -1.0);
    EXPECT_EQ(eval_ideal(FloorDiv::make(f32(-7), f32(2))), -4.0);
    EXPECT_EQ(eval_ideal(FloorMod::make(f32(-7), f32(2))), 1.0);
    EXPECT_TRUE(std::isinf(eval_ideal(Div::make(f32(1), f32(0)))));
    double nan = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(eval_ideal(Min::make(f32(nan), f32(3))), 3.0);
    EXPECT_EQ(eval_ideal(Max::make(f32(2), f32(nan))), 2.0);
    EXPECT_EQ(eval_int(Min::make(i32(-3), i32(2))), -3);
    EXPECT_EQ(eval_int(Max::make(u8(200), u8(3))), 200);
}

TEST(ExprEval, IdealVersusExactFloat32) {
    // 1 + 2^-30 is not representable in float32: Exact rounds it away, Ideal keeps it.
    Expr e = Add::make(f32(1), f32(std::ldexp(1.0, -30)));
    EXPECT_EQ(eval_ideal(e), 1.0 + std::ldexp(1.0, -30));
    EXPECT_EQ(eval_exact(e), 1.0);
    Expr third = Div::make(f32(1), f32(3));
    EXPECT_EQ(eval_ideal(third), 1.0 / 3.0);
    EXPECT_EQ(eval_exact(third), static_cast<double>(1.0f / 3.0f));
}

TEST(ExprEval, Float16Rounding) {
    Type h = Float(16);
    // float16 has 10 mantissa bits: 1 + 2^-11 ties to even (1), 1 + 3*2^-11 ties up.
    Expr a = Add::make(make_const(h, 1.0), make_const(h, std::ldexp(1.0, -11)));
    EXPECT_EQ(eval_exact(a), 1.0);
    EXPECT_EQ(eval_ideal(a), 1.0 + std::ldexp(1.0, -11));
    Expr b =
        Add::make(make_const(h, 1.0 + std::ldexp(1.0, -10)), make_const(h, std::ldexp(1.0, -11)));
    EXPECT_EQ(eval_exact(b), 1.0 + std::ldexp(1.0, -9));
    EXPECT_TRUE(std::isinf(eval_exact(Mul::make(make_const(h, 300.0), make_const(h, 300.0)))));
    EXPECT_EQ(eval_ideal(Mul::make(make_const(h, 300.0), make_const(h, 300.0))), 90000.0);
    Expr bf = Add::make(make_const(BFloat(16), 1.0), make_const(BFloat(16), std::ldexp(1.0, -9)));
    EXPECT_EQ(eval_exact(bf), 1.0);
    // Casting a float32 value to float16 rounds in Exact mode only.
    Expr c = Cast::make(h, f32(0.1));
    EXPECT_EQ(eval_exact(c), round_to_float_type(0.1, h));
    EXPECT_EQ(eval_ideal(c), static_cast<double>(0.1f));
}

TEST(ExprEval, Casts) {
    Type i8t = Int(8), u8t = UInt(8);
    EXPECT_EQ(eval_int(Cast::make(i8t, i32(300))), 44);
    EXPECT_EQ(eval_int(Cast::make(i8t, i32(-129))), 127);
    EXPECT_EQ(eval_int(Cast::make(u8t, i32(-1))), 255);
    EXPECT_EQ(eval_int(Cast::make(Int(32), u8(255))), 255);   // zero-extends
    EXPECT_EQ(eval_int(Cast::make(Int(32), i8(-1))), -1);     // sign-extends
    EXPECT_EQ(eval_int(Cast::make(Int(32), f32(-2.9))), -2);  // truncates toward zero
    EXPECT_EQ(eval_int(Cast::make(Int(32), f32(2.9))), 2);
    EXPECT_EQ(eval_int(Cast::make(i8t, f32(1000))), 127);  // saturates
    EXPECT_EQ(eval_int(Cast::make(i8t, f32(-1000))), -128);
    EXPECT_EQ(eval_int(Cast::make(u8t, f32(-5))), 0);
    EXPECT_EQ(eval_int(Cast::make(Int(32), f32(NAN))), 0);
    EXPECT_EQ(eval_int(Cast::make(Int(64), make_const(Float(64), 1e30))),
              std::numeric_limits<int64_t>::max());
    EXPECT_EQ(evaluate_expr(Cast::make(UInt(64), make_const(Float(64), 1e30))).as_uint(),
              ~uint64_t(0));
    EXPECT_EQ(eval_int(Cast::make(Int(32), f32(INFINITY))), INT32_MAX);
    EXPECT_EQ(eval_int(Cast::make(Bool(), f32(0.5))), 1);
    EXPECT_EQ(eval_int(Cast::make(Bool(), i32(0))), 0);
    EXPECT_EQ(eval_ideal(Cast::make(Float(32), u8(200))), 200.0);
    Expr umax = UIntImm::make(UInt(64), ~uint64_t(0));
    EXPECT_EQ(eval_ideal(Cast::make(Float(64), umax)), 18446744073709551616.0);
    EXPECT_EQ(eval_exact(Cast::make(Float(32), i32(16777217))), 16777216.0);
}

TEST(ExprEval, ComparisonsAndLogic) {
    EXPECT_TRUE(evaluate_expr(LT::make(i32(-1), i32(0))).as_bool());
    EXPECT_FALSE(evaluate_expr(LT::make(u8(255), u8(0))).as_bool());  // unsigned compare
    EXPECT_TRUE(evaluate_expr(GE::make(i32(3), i32(3))).as_bool());
    EXPECT_TRUE(evaluate_expr(NE::make(f32(NAN), f32(NAN))).as_bool());
    EXPECT_FALSE(evaluate_expr(EQ::make(f32(NAN), f32(NAN))).as_bool());
    EXPECT_FALSE(evaluate_expr(LE::make(f32(NAN), f32(1))).as_bool());
    EXPECT_TRUE(evaluate_expr(GT::make(f32(2), f32(1))).as_bool());
    EXPECT_FALSE(evaluate_expr(And::make(const_true(), const_false())).as_bool());
    EXPECT_TRUE(evaluate_expr(Or::make(const_false(), const_true())).as_bool());
    EXPECT_TRUE(evaluate_expr(Not::make(const_false())).as_bool());
    EXPECT_TRUE(evaluate_expr(EQ::make(const_true(), const_true())).as_bool());
}

TEST(ExprEval, SelectEvaluatesBothSides) {
    Var x("x");
    EXPECT_EQ(evaluate_expr(Select::make(const_true(), i32(1), i32(2))).as_int(), 1);
    // The untaken operand is still evaluated: an unbound variable there throws.
    EXPECT_THROW(evaluate_expr(Select::make(const_true(), i32(1), x)), RuntimeError);
    Value v = evaluate_expr(Select::make(Ramp::make(i32(0), i32(1), 4) < Broadcast::make(i32(2), 4),
                                         Broadcast::make(i32(7), 4), Broadcast::make(i32(9), 4)));
    EXPECT_EQ(v.as_int(1), 7);
    EXPECT_EQ(v.as_int(2), 9);
}

TEST(ExprEval, RampBroadcastVectors) {
    Value r = evaluate_expr(Ramp::make(i32(5), i32(-2), 4));
    ASSERT_EQ(r.lane_count(), 4);
    EXPECT_EQ(r.as_int(0), 5);
    EXPECT_EQ(r.as_int(3), -1);
    Value w = evaluate_expr(Ramp::make(i8(126), i8(1), 3));
    EXPECT_EQ(w.as_int(2), -128);  // lanes wrap in the element type
    Value s = evaluate_expr(Ramp::make(i32(0), i32(1), 4) * Broadcast::make(i32(3), 4));
    EXPECT_EQ(s.as_int(3), 9);
    EXPECT_EQ(s.type, Int(32, 4));
}

TEST(ExprEval, LetShadowsAndRestores) {
    Var x("x");
    Expr e = Let::make(x, i32(4), Let::make(x, x * 2, x + 1)) + x;
    ExprEvaluator ev;
    ev.bind_int(x, 100);
    EXPECT_EQ(ev.eval(e).as_int(), 9 + 100);
    EXPECT_EQ(ev.lookup(x.get())->as_int(), 100);
    ExprEvaluator fresh;
    EXPECT_EQ(fresh.eval(Let::make(x, i32(2), x * x)).as_int(), 4);
    EXPECT_EQ(fresh.lookup(x.get()), nullptr);
}

TEST(ExprEval, MathIntrinsics) {
    double x = 0.7;
    Expr fx = make_const(Float(64), x);
    EXPECT_DOUBLE_EQ(eval_ideal(exp(fx)), std::exp(x));
    EXPECT_DOUBLE_EQ(eval_ideal(exp2(fx)), std::exp2(x));
    EXPECT_DOUBLE_EQ(eval_ideal(log(fx)), std::log(x));
    EXPECT_DOUBLE_EQ(eval_ideal(log2(fx)), std::log2(x));
    EXPECT_DOUBLE_EQ(eval_ideal(sqrt(fx)), std::sqrt(x));
    EXPECT_DOUBLE_EQ(eval_ideal(rsqrt(fx)), 1.0 / std::sqrt(x));
    EXPECT_DOUBLE_EQ(eval_ideal(tanh(fx)), std::tanh(x));
    EXPECT_DOUBLE_EQ(eval_ideal(sigmoid(fx)), 1.0 / (1.0 + std::exp(-x)));
    EXPECT_DOUBLE_EQ(eval_ideal(erf(fx)), std::erf(x));
    EXPECT_DOUBLE_EQ(eval_ideal(sin(fx)), std::sin(x));
    EXPECT_DOUBLE_EQ(eval_ideal(cos(fx)), std::cos(x));
    EXPECT_DOUBLE_EQ(eval_ideal(pow(fx, make_const(Float(64), 2.5))), std::pow(x, 2.5));
    EXPECT_EQ(eval_ideal(abs(make_const(Float(64), -1.5))), 1.5);
    EXPECT_EQ(eval_int(abs(i32(-5))), 5);
    EXPECT_EQ(eval_int(abs(i8(-128))), -128);  // wraps
    EXPECT_EQ(eval_ideal(floor(make_const(Float(64), -1.5))), -2.0);
    EXPECT_EQ(eval_ideal(ceil(make_const(Float(64), -1.5))), -1.0);
    EXPECT_EQ(eval_ideal(round(make_const(Float(64), 2.5))), 2.0);  // half to even
    EXPECT_EQ(eval_ideal(round(make_const(Float(64), -3.5))), -4.0);
    EXPECT_EQ(eval_ideal(trunc(make_const(Float(64), -1.7))), -1.0);
    EXPECT_EQ(eval_ideal(fma(f32(2), f32(3), f32(1))), 7.0);
    EXPECT_TRUE(evaluate_expr(isnan(f32(NAN))).as_bool());
    EXPECT_FALSE(evaluate_expr(isnan(f32(1))).as_bool());
    EXPECT_TRUE(evaluate_expr(Call::make(Intrinsic::likely, {const_true()})).as_bool());
    // Exact mode rounds transcendental results to float32.
    EXPECT_EQ(eval_exact(exp(f32(x))), static_cast<double>(static_cast<float>(
                                           std::exp(static_cast<double>(static_cast<float>(x))))));
}

TEST(ExprEval, FmaRoundsOnceInExactMode) {
    // (1 + 2^-12)^2 - (1 + 2^-11) = 2^-24: lost by a rounded multiply, kept by fma.
    double a = 1.0 + std::ldexp(1.0, -12);
    Expr e = fma(f32(a), f32(a), f32(-(1.0 + std::ldexp(1.0, -11))));
    EXPECT_EQ(eval_exact(e), std::ldexp(1.0, -24));
    Expr unfused = Add::make(Mul::make(f32(a), f32(a)), f32(-(1.0 + std::ldexp(1.0, -11))));
    EXPECT_EQ(eval_exact(unfused), 0.0);
    EXPECT_EQ(eval_ideal(unfused), std::ldexp(1.0, -24));
}

TEST(ExprEval, IfThenElseIsLazy) {
    Var x("x");
    // The untaken branch mentions an unbound variable: not evaluated, so no error.
    EXPECT_EQ(eval_int(if_then_else(const_true(), i32(1), x)), 1);
    EXPECT_EQ(eval_int(if_then_else(const_false(), x, i32(2))), 2);
    EXPECT_THROW(evaluate_expr(if_then_else(const_true(), x, i32(2))), RuntimeError);
    // Vector condition: a branch no lane takes is not evaluated.
    Expr none = LT::make(Ramp::make(i32(0), i32(1), 4), Broadcast::make(i32(0), 4));
    Value v = evaluate_expr(Call::make(Intrinsic::if_then_else,
                                       {none, Broadcast::make(x, 4), Broadcast::make(i32(3), 4)}));
    EXPECT_EQ(v.as_int(0), 3);
}

TEST(ExprEval, VectorIfThenElseMasksReads) {
    // if_then_else(ramp < 2, load(buf, ramp), 0): only lanes 0 and 1 may be read.
    Var buf("buf", Handle());
    Expr idx = Ramp::make(i32(0), i32(1), 4);
    Expr cond = LT::make(idx, Broadcast::make(i32(2), 4));
    Expr e = Call::make(Intrinsic::if_then_else,
                        {cond, Load::make(Float(32, 4), buf, idx), Broadcast::make(f32(-1), 4)});
    ExprEvalCallbacks cb;
    std::vector<int64_t> read;
    cb.load = [&](const Load*, const Value& index, const Value& mask) {
        Value r = Value::make_float(Float(32, 4), 0.0);
        for (int l = 0; l < 4; ++l) {
            if (!mask.as_bool(l)) continue;
            read.push_back(index.as_int(l));
            r.lanes[l].f = 10.0 + index.as_int(l);
        }
        return r;
    };
    Value v = evaluate_expr(e, {}, FloatMode::Ideal, cb);
    EXPECT_EQ(read, (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(v.as_double(1), 11.0);
    EXPECT_EQ(v.as_double(2), -1.0);
}

TEST(ExprEval, ReadsGoThroughCallbacks) {
    auto* tn = new TensorNode();
    tn->shape = {Expr(4)};
    tn->dtype = Float(32);
    tn->name = "A";
    Tensor A(tn);
    Var i("i");
    Expr read = TensorRead::make(A, {i + 1});
    ExprEvalCallbacks cb;
    cb.tensor_read = [](const TensorRead* r, const std::vector<Value>& idx) {
        EXPECT_EQ(r->tensor.name(), "A");
        return Value::make_float(Float(32), 0.5 * static_cast<double>(idx[0].as_int()));
    };
    EXPECT_EQ(evaluate_expr(read * 2.0f, {{i, Value::make_int(Int(32), 2)}}, FloatMode::Ideal, cb)
                  .as_double(),
              3.0);
    // Without a callback the read is a RuntimeError naming the tensor.
    try {
        evaluate_expr(read, {{i, Value::make_int(Int(32), 2)}});
        FAIL() << "expected RuntimeError";
    } catch (const RuntimeError& e) {
        EXPECT_NE(std::string(e.what()).find("'A'"), std::string::npos);
    }
    Buffer B("B", Int(32), {Expr(8)});
    ExprEvalCallbacks bcb;
    bcb.buffer_load = [](const BufferLoad*, const std::vector<Value>& idx, const Value&) {
        return Value::make_int(Int(32), idx[0].as_int() * 10);
    };
    EXPECT_EQ(evaluate_expr(BufferLoad::make(B, {i32(3)}), {}, FloatMode::Ideal, bcb).as_int(), 30);
}

TEST(ExprEval, BarrierAndReduceAreNotEvaluable) {
    EXPECT_THROW(evaluate_expr(Call::make(Intrinsic::thread_barrier, {})), RuntimeError);
    Var l("l", Float(32)), r("r", Float(32));
    CommReducer sum_r("sum", {l}, {r}, {Add::make(l, r)}, {f32(0)});
    IterVar k(Var("k"), Range(i32(0), i32(4)), IterVarKind::Reduce);
    Expr red = Reduce::make(sum_r, {Cast::make(Float(32), k.var())}, {k}, Expr(), 0);
    EXPECT_THROW(evaluate_expr(red), RuntimeError);
    ExprEvalCallbacks cb;
    cb.reduce = [](const Reduce*) { return Value::make_float(Float(32), 6.0); };
    EXPECT_EQ(evaluate_expr(red, {}, FloatMode::Ideal, cb).as_double(), 6.0);
}

TEST(ExprEval, SameValue) {
    EXPECT_TRUE(same_value(Value::make_float(Float(32), NAN), Value::make_float(Float(32), NAN)));
    EXPECT_FALSE(same_value(Value::make_int(Int(32), 1), Value::make_int(Int(64), 1)));
    EXPECT_EQ(Value::make_int(UInt(8), -1).as_int(), 255);
    EXPECT_EQ(Value::from_ints(Int(8), {1, 300}).str(), "int8x2(1, 44)");
}

// A Value's lanes: up to LaneVector::kInline in place, more on the heap; every way across keeps
// the lanes, and at() past the end throws as std::vector's does.
TEST(ExprEval, LaneVectorKeepsItsLanesInPlaceAndOnTheHeap) {
    auto lane = [](int64_t i) { return Scalar{i}; };
    auto expect_lanes = [](const LaneVector& v, std::vector<int64_t> want) {
        ASSERT_EQ(v.size(), want.size());
        for (size_t l = 0; l < want.size(); ++l) EXPECT_EQ(v.at(l).i, want[l]) << "lane " << l;
    };
    LaneVector v;
    EXPECT_TRUE(v.empty());
    for (int64_t i = 0; i < 6; ++i) v.push_back(lane(i));  // in place, then across at 5
    expect_lanes(v, {0, 1, 2, 3, 4, 5});
    v.resize(3);  // back in place
    expect_lanes(v, {0, 1, 2});
    v.resize(9, lane(7));  // across again, the new lanes filled
    expect_lanes(v, {0, 1, 2, 7, 7, 7, 7, 7, 7});
    LaneVector copy = v, moved = std::move(copy);
    v[0] = lane(-1);
    expect_lanes(moved, {0, 1, 2, 7, 7, 7, 7, 7, 7});
    LaneVector small{lane(4), lane(5)};
    moved = small;
    expect_lanes(moved, {4, 5});
    EXPECT_THROW(small.at(2), std::out_of_range);
    int64_t sum = 0;
    for (const Scalar& s : LaneVector(16, lane(2))) sum += s.i;
    EXPECT_EQ(sum, 32);
    // A 16-lane Ramp evaluates through the heap path.
    Value r = evaluate_expr(Ramp::make(make_const(Int(32), 3), make_const(Int(32), 2), 16));
    ASSERT_EQ(r.lane_count(), 16);
    EXPECT_EQ(r.as_int(15), 33);
}
