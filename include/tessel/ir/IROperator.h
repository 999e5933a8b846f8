// Operators and functions that build checked IR: what the DSL and passes write expressions with.
//
// Operands must have the same type: mixing int32 with float32, or float32 with float16, throws
// DSLError naming both types (write an explicit cast). C++ literals adapt to the other operand's
// type: `x + 1` for a float32 x adds 1.0f; an integer literal that does not fit the other side's
// integer type is an error. A scalar operand meeting a vector operand is broadcast.
#pragma once

#include "tessel/ir/IR.h"

namespace tessel {

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
/// Floats: true division. Integers: floor division (as schedules need); see truncdiv.
Expr operator/(Expr a, Expr b);
/// Integers: floor modulo (result has the divisor's sign). Not defined for floats.
Expr operator%(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
/// Logical and/or/not of bool expressions (both sides are evaluated; see if_then_else).
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);

// Literal adaptation: the literal takes the Expr operand's type.
#define TESSEL_LITERAL_OPS(op)          \
    Expr operator op(Expr a, int b);    \
    Expr operator op(int a, Expr b);    \
    Expr operator op(Expr a, double b); \
    Expr operator op(double a, Expr b);
TESSEL_LITERAL_OPS(+)
TESSEL_LITERAL_OPS(-)
TESSEL_LITERAL_OPS(*)
TESSEL_LITERAL_OPS(/)
TESSEL_LITERAL_OPS(%)
TESSEL_LITERAL_OPS(<)
TESSEL_LITERAL_OPS(<=)
TESSEL_LITERAL_OPS(>)
TESSEL_LITERAL_OPS(>=)
TESSEL_LITERAL_OPS(==)
TESSEL_LITERAL_OPS(!=)
#undef TESSEL_LITERAL_OPS

Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
/// Integer division rounding toward -infinity / remainder of it (also valid on floats: floor(a/b)).
Expr floordiv(Expr a, Expr b);
Expr floormod(Expr a, Expr b);
/// C-style truncating integer division and remainder (on floats: a / b and fmod).
Expr truncdiv(Expr a, Expr b);
Expr truncmod(Expr a, Expr b);
/// Evaluates all three operands.
Expr select(Expr condition, Expr true_value, Expr false_value);
/// Evaluates only the taken branch (safe for guarded reads).
Expr if_then_else(Expr condition, Expr true_value, Expr false_value);
/// Converts `value` to type `t` (lanes follow value's when t is scalar).
Expr cast(Type t, Expr value);

// Math intrinsics on float expressions (abs also on integers).
Expr exp(Expr x);
Expr exp2(Expr x);
Expr log(Expr x);
Expr log2(Expr x);
Expr sqrt(Expr x);
Expr rsqrt(Expr x);
Expr tanh(Expr x);
Expr sigmoid(Expr x);
Expr erf(Expr x);
/// x (float32) rounded to tf32 (Intrinsic::round_tf32).
Expr round_tf32(Expr x);
/// The value round_tf32 gives for v (a float32 value held as a double).
double round_to_tf32(double v);
Expr sin(Expr x);
Expr cos(Expr x);
Expr pow(Expr x, Expr y);
Expr abs(Expr x);
Expr floor(Expr x);
Expr ceil(Expr x);
Expr round(Expr x);
Expr trunc(Expr x);
Expr fma(Expr a, Expr b, Expr c);
Expr isnan(Expr x);

/// Largest / smallest finite value of a type (for float types: ±max finite; ±inf via inf_value).
Expr max_value(Type t);
Expr min_value(Type t);
Expr inf_value(Type t);

namespace internal {
/// Brings two operands to a common type for `op_name`, or throws DSLError naming both types.
/// Literal constants (IntImm/FloatImm made from C++ literals) adapt to the other side.
void match_types(const char* op_name, Expr* a, Expr* b);
}  // namespace internal

}  // namespace tessel
