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

void check_float(const Tensor& t, const char* op, const char* param) {
    if (!t.dtype().is_float() && !t.dtype().is_bfloat())
        bad_param(op, param, "must have a float dtype, got " + t.dtype().str());
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
