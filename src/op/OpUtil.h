// What the operator library's sources share: parameter checks that throw DSLError naming the
// operator and the parameter, and shape conversions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/Error.h"
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
/// DSLError unless `t` has a float dtype.
void check_float(const Tensor& t, const char* op, const char* param);
/// The largest divisor of `extent` that is at most `cap` (at least 1).
int64_t divisor_at_most(int64_t extent, int64_t cap);
/// The name given, or `fallback` when it is empty.
std::string name_or(const std::string& name, const std::string& fallback);

}  // namespace tessel::op::internal
