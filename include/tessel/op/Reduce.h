// Reductions of the operator library (docs/operators.md): sum, mean, max, min, argmax and argmin
// over any axes, with or without keeping the reduced axes (as extents of 1).
//
//   Tensor s = op::sum(x, {0, 2});            // (A, B, C) → (B,)
//   Tensor m = op::max(x, {}, true);          // every axis, keepdims: (1, 1, 1)
//
// sum and mean accumulate as matmul does (op/Matmul.h): float16/bfloat16 in float32 (the result
// in the input's type), 8- and 16-bit integers in int32 (the result int32); `out_dtype` chooses
// the result's type. An empty axis list reduces every axis. DSLError names the operator and `axis`:
// an axis out of range or listed twice. argmax/argmin reduce one axis and return int32 indices (the
// first of equal values, as NumPy).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessel/te/Operation.h"

namespace tessel::op {

/// The sum over `axis` (every axis when empty).
Tensor sum(const Tensor& x, const std::vector<int64_t>& axis = {}, bool keepdims = false,
           std::optional<Type> out_dtype = std::nullopt, const std::string& name = "sum");
/// The mean over `axis` (float dtypes).
Tensor mean(const Tensor& x, const std::vector<int64_t>& axis = {}, bool keepdims = false,
            std::optional<Type> out_dtype = std::nullopt, const std::string& name = "mean");
/// The maximum over `axis`.
Tensor max(const Tensor& x, const std::vector<int64_t>& axis = {}, bool keepdims = false,
           const std::string& name = "max");
/// The minimum over `axis`.
Tensor min(const Tensor& x, const std::vector<int64_t>& axis = {}, bool keepdims = false,
           const std::string& name = "min");
/// The int32 index of the maximum along `axis`.
Tensor argmax(const Tensor& x, int64_t axis, bool keepdims = false,
              const std::string& name = "argmax");
/// The int32 index of the minimum along `axis`.
Tensor argmin(const Tensor& x, int64_t axis, bool keepdims = false,
              const std::string& name = "argmin");

/// `axis` made non-negative for `ndim` dimensions; DSLError naming `op` and `param` if it is
/// outside [-ndim, ndim).
int64_t normalize_axis(int64_t axis, size_t ndim, const char* op, const char* param = "axis");

}  // namespace tessel::op
