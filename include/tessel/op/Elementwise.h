// Element-wise operators of the operator library (docs/operators.md): unary maths and activations,
// binary arithmetic with NumPy broadcasting, cast, clip and where.
//
//   Tensor y = op::relu(op::add(x, bias));   // bias of shape (N,) broadcasts over x's rows
//
// Every operator builds one compute stage named after it (or `name`); a chain of them is what
// default_schedule() inlines into one loop nest. Shapes must be constant. Misuse throws DSLError
// naming the operator and the parameter at fault.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/te/Operation.h"

namespace tessel::op {

/// An activation applied element-wise (dense's fused activation, and the unary operators below).
enum class Activation : uint8_t { None, ReLU, GELU, SiLU, Sigmoid, Tanh };

/// "none", "relu", "gelu", "silu", "sigmoid", "tanh".
const char* activation_name(Activation a);
/// The activation called `name` (as activation_name prints it); DSLError naming `param` if unknown.
Activation parse_activation(const std::string& name, const char* param = "activation");
/// `a` applied to the scalar expression `x` (float types only; DSLError otherwise).
Expr apply_activation(Activation a, Expr x);

/// The constant shape of `t`; DSLError naming `op` and `param` if an extent is symbolic.
std::vector<int64_t> constant_shape(const Tensor& t, const char* op, const char* param);

/// NumPy's broadcast of two shapes (aligned at the right; an extent of 1 stretches). DSLError
/// naming `op` and the dimension when two extents differ and neither is 1.
std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                     const char* op);

/// `f(x[i...])` at every point of x.
Tensor unary(const Tensor& x, const std::function<Expr(Expr)>& f, const std::string& name);
/// `f(a[...], b[...])` over the broadcast shape of a and b. Operands of different dtypes are a
/// DSLError naming the operator (cast one first).
Tensor binary(const Tensor& a, const Tensor& b, const std::function<Expr(Expr, Expr)>& f,
              const std::string& name);

/// max(x, 0).
Tensor relu(const Tensor& x, const std::string& name = "relu");
/// x * 0.5 * (1 + erf(x / sqrt(2))): the exact GELU.
Tensor gelu(const Tensor& x, const std::string& name = "gelu");
/// x * sigmoid(x).
Tensor silu(const Tensor& x, const std::string& name = "silu");
/// 1 / (1 + exp(-x)).
Tensor sigmoid(const Tensor& x, const std::string& name = "sigmoid");
/// tanh(x).
Tensor tanh(const Tensor& x, const std::string& name = "tanh");
/// exp(x).
Tensor exp(const Tensor& x, const std::string& name = "exp");
/// log(x).
Tensor log(const Tensor& x, const std::string& name = "log");
/// sqrt(x).
Tensor sqrt(const Tensor& x, const std::string& name = "sqrt");
/// |x|.
Tensor abs(const Tensor& x, const std::string& name = "abs");
/// -x.
Tensor negative(const Tensor& x, const std::string& name = "negative");
/// The activation `a` (None copies x).
Tensor activation(const Tensor& x, Activation a, const std::string& name = "");

/// a + b, broadcast.
Tensor add(const Tensor& a, const Tensor& b, const std::string& name = "add");
/// a - b, broadcast.
Tensor subtract(const Tensor& a, const Tensor& b, const std::string& name = "subtract");
/// a * b, broadcast.
Tensor multiply(const Tensor& a, const Tensor& b, const std::string& name = "multiply");
/// a / b, broadcast (integer division truncates, as C++).
Tensor divide(const Tensor& a, const Tensor& b, const std::string& name = "divide");
/// max(a, b), broadcast.
Tensor maximum(const Tensor& a, const Tensor& b, const std::string& name = "maximum");
/// min(a, b), broadcast.
Tensor minimum(const Tensor& a, const Tensor& b, const std::string& name = "minimum");
/// a ** b, broadcast (float types).
Tensor power(const Tensor& a, const Tensor& b, const std::string& name = "power");

/// x converted to `dtype` (the DSL's Cast rules).
Tensor cast(const Tensor& x, Type dtype, const std::string& name = "cast");
/// min(max(x, lo), hi). DSLError naming `lo` if lo > hi.
Tensor clip(const Tensor& x, double lo, double hi, const std::string& name = "clip");
/// cond ? a : b element-wise over the broadcast shape of the three; `cond` is bool or a number
/// (non-zero is true); a and b must have one dtype.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b,
             const std::string& name = "where");

}  // namespace tessel::op
