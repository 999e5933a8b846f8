// What the operator library's sources share: parameter checks that throw DSLError naming the
// operator and the parameter, and shape conversions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessel/Error.h"
#include "tessel/op/Conv.h"
#include "tessel/op/Elementwise.h"
#include "tessel/te/Operation.h"

namespace tessel::op::internal {

/// Constant extents as index expressions.
std::vector<Expr> to_exprs(const std::vector<int64_t>& shape);
/// Throws DSLError "<op>: parameter '<param>' <what>".
[[noreturn]] void bad_param(const char* op, const char* param, const std::string& what);
/// DSLError unless `t` is defined and has `ndim` dimensions.
void check_rank(const Tensor& t, size_t ndim, const char* op, const char* param);
/// DSLError naming `param` unless `b` has `a`'s dtype.
void check_same_dtype(const Tensor& a, const Tensor& b, const char* op, const char* param);
/// DSLError naming `param` unless the operands of a product can be multiplied: one dtype, or two
/// 8-bit integers of either signedness (uint8 x int8, as VNNI and ONNX's QLinear operators take
/// them; both accumulate in int32, which holds every such product).
void check_product_dtypes(const Tensor& a, const Tensor& b, const char* op, const char* param);
/// DSLError unless `t` has a float dtype.
void check_float(const Tensor& t, const char* op, const char* param);
/// What a product or a sum of `in` operands accumulates in and returns (docs/design.md, decision 10).
struct Accumulation {
    Type accumulate;  ///< the reduction's type: never narrower than the operands
    Type out;         ///< the operator's result: `out_dtype`, else its default for `in`
    /// `e` (of the operands' type) as the accumulator's type.
    Expr widen(Expr e) const { return cast(accumulate, std::move(e)); }
    /// `e` (of the accumulator's type) as the result's type.
    Expr narrow(Expr e) const { return cast(out, std::move(e)); }
};
/// The accumulation of a product or sum of `in` operands for `out_dtype` (unset: the default):
/// 16-bit floats accumulate in float32 and return their own type, 8- and 16-bit integers
/// accumulate in and return int32, other types both in themselves; a wider `out_dtype` widens the
/// accumulator too (float64 accumulates in float64). DSLError naming `op` for an out_dtype that
/// is not a scalar number, a float operand with an integer out_dtype, or an integer out_dtype
/// narrower than the int32 accumulator.
Accumulation accumulation(Type in, std::optional<Type> out_dtype, const char* op);

/// The reduction stage `name` over `shape` whose value `body` gives (in the accumulator's type),
/// as the operator's result: itself when the accumulator is the result's type, else computed as
/// "<name>.acc" and narrowed by a cast stage "<name>".
Tensor reduction_stage(const std::vector<int64_t>& shape, const Accumulation& acc,
                       const std::function<Expr(const std::vector<Var>&)>& body,
                       const std::string& name);

/// `x` padded with `before` and `after` elements on each axis (of x's rank, not negative: the
/// caller checks them), the new elements `fill` (of x's dtype; it may read a tensor).
Tensor pad_with(const Tensor& x, const std::vector<int64_t>& before,
                const std::vector<int64_t>& after, const Expr& fill, const std::string& name);

/// The checked shapes of a conv2d_nchw (op/Conv.h) and its output extents.
struct Conv2DGeometry {
    std::vector<int64_t> x, w;  ///< (N, C, H, W), (K, C / groups, R, S)
    int64_t oh = 0, ow = 0;
};
/// conv2d_nchw's checks of its operands and parameters, each DSLError naming `op`.
Conv2DGeometry check_conv2d_nchw(const Tensor& x, const Tensor& w, const Conv2DParams& p,
                                 const char* op);
/// conv2d_nchw's reduction stage over `padded`: x already padded as `p` says.
Tensor conv2d_nchw_of_padded(const Tensor& padded, const Tensor& w, const Conv2DParams& p,
                             const Conv2DGeometry& g, const Accumulation& acc,
                             const std::string& name);

/// a / b rounded up (a >= 0, b > 0).
inline int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}
/// The largest divisor of `extent` that is at most `cap` (at least 1).
int64_t divisor_at_most(int64_t extent, int64_t cap);
/// The name given, or `fallback` when it is empty.
std::string name_or(const std::string& name, const std::string& fallback);

}  // namespace tessel::op::internal
