// Shared parameter checks of the operator library (OpUtil.h).
#include "op/OpUtil.h"

#include <algorithm>

#include "tessel/op/Elementwise.h"

namespace tessel::op {

std::vector<int64_t> constant_shape(const Tensor& t, const char* op, const char* param) {
    if (!t.defined()) internal::bad_param(op, param, "is undefined");
    std::vector<int64_t> shape;
    for (size_t i = 0; i < t.ndim(); ++i) {
        auto c = as_const_int(t.shape()[i]);
        if (!c)
            internal::bad_param(op, param,
                                "has a symbolic extent on axis " + std::to_string(i) +
                                    " (the operator library needs constant shapes)");
        shape.push_back(*c);
    }
    return shape;
}

namespace internal {

std::vector<Expr> to_exprs(const std::vector<int64_t>& shape) {
    std::vector<Expr> result;
    for (int64_t e : shape) result.push_back(make_const(Int(32), e));
    return result;
}

void bad_param(const char* op, const char* param, const std::string& what) {
    TESSEL_THROW(DSLError) << op << ": parameter '" << param << "' " << what;
}

void check_rank(const Tensor& t, size_t ndim, const char* op, const char* param) {
    if (!t.defined()) bad_param(op, param, "is undefined");
    if (t.ndim() != ndim)
        bad_param(op, param,
                  "must be " + std::to_string(ndim) + "-D, got " + std::to_string(t.ndim()) +
                      "-D tensor '" + t.name() + "'");
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op, const char* param) {
    if (a.dtype() != b.dtype())
        bad_param(op, param,
                  "has dtype " + b.dtype().str() + " but '" + a.name() + "' has " +
                      a.dtype().str() + " (cast one first)");
}

void check_product_dtypes(const Tensor& a, const Tensor& b, const char* op, const char* param) {
    auto byte_int = [](Type t) { return t.is_scalar() && t.is_int_or_uint() && t.bits == 8; };
    if (byte_int(a.dtype()) && byte_int(b.dtype())) return;
    check_same_dtype(a, b, op, param);
}

void check_float(const Tensor& t, const char* op, const char* param) {
    if (!t.dtype().is_float() && !t.dtype().is_bfloat())
        bad_param(op, param, "must have a float dtype, got " + t.dtype().str());
}

Accumulation accumulation(Type in, std::optional<Type> out_dtype, const char* op) {
    const bool small_int = in.is_int_or_uint() && in.bits < 32;
    const Type natural = in.is_float() && in.bits == 16 ? Float(32) : small_int ? Int(32) : in;
    const Type out = out_dtype.value_or(small_int ? Int(32) : in);
    if (!out.is_scalar() || out.is_bool() || out.is_handle())
        bad_param(op, "out_dtype", "must be a scalar number type, got " + out.str());
    if (in.is_float() && !out.is_float())
        bad_param(op, "out_dtype",
                  "is " + out.str() + " but the operands are " + in.str() +
                      " (a float product is not an integer; cast the result instead)");
    if (in.is_int_or_uint() && out.is_int_or_uint() && out.bits < natural.bits)
        bad_param(op, "out_dtype",
                  "is " + out.str() + ", narrower than the " + natural.str() + " accumulator of " +
                      in.str() +
                      " operands (an integer product is "
                      "returned in at least 32 bits)");
    // A wider result of the accumulator's kind widens the accumulator (float64, int64).
    const bool same_kind = out.is_float() == natural.is_float();
    const Type accumulate = same_kind && out.bits > natural.bits ? out.element_of() : natural;
    return {accumulate, out};
}

Tensor reduction_stage(const std::vector<int64_t>& shape, const Accumulation& acc,
                       const std::function<Expr(const std::vector<Var>&)>& body,
                       const std::string& name) {
    const bool same = acc.accumulate == acc.out;
    Tensor sum = compute(to_exprs(shape), body, same ? name : name + ".acc");
    if (same) return sum;
    return unary(
        sum, [&acc](Expr e) { return acc.narrow(e); }, name);
}

std::string name_or(const std::string& name, const std::string& fallback) {
    return name.empty() ? fallback : name;
}

int64_t divisor_at_most(int64_t extent, int64_t cap) {
    for (int64_t f = std::min(extent, cap); f > 1; --f)
        if (extent % f == 0) return f;
    return 1;
}

}  // namespace internal
}  // namespace tessel::op
