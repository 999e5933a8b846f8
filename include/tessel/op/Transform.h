// Layout and indexing operators of the operator library (docs/operators.md): transpose, reshape,
// concatenate, split, pad and take. Each output is one injective stage that default_schedule()
// inlines into its consumers or vectorises.
//
//   Tensor t = op::transpose(x, {0, 2, 1});
//   std::vector<Tensor> parts = op::split(x, {3, 5}, 1);   // at indices 3 and 5 of axis 1
//
// DSLError names the operator and the parameter: axes that are not a permutation, a reshape that
// changes the element count, shapes that differ off the concatenation axis, split indices that
// are not increasing, negative padding, an index tensor that is not integer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/te/Operation.h"

namespace tessel::op {

/// Permutes the axes: output axis i is input axis `axes[i]` (reversed when empty).
Tensor transpose(const Tensor& x, std::vector<int64_t> axes = {},
                 const std::string& name = "transpose");
/// The same elements in row-major order with shape `shape` (one entry may be -1: inferred).
Tensor reshape(const Tensor& x, std::vector<int64_t> shape, const std::string& name = "reshape");
/// Joins tensors of one dtype along `axis`; they agree on every other extent.
Tensor concatenate(const std::vector<Tensor>& xs, int64_t axis = 0,
                   const std::string& name = "concatenate");
/// Splits along `axis` at the given increasing indices (NumPy's split with a list).
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& indices, int64_t axis = 0,
                          const std::string& name = "split");
/// Splits along `axis` into `sections` equal parts (DSLError if the extent is not divisible).
std::vector<Tensor> split_sections(const Tensor& x, int64_t sections, int64_t axis = 0,
                                   const std::string& name = "split");
/// Pads every axis with `before[i]` and `after[i]` elements of `value` (after defaults to before).
Tensor pad(const Tensor& x, const std::vector<int64_t>& before, std::vector<int64_t> after = {},
           double value = 0.0, const std::string& name = "pad");
/// Gathers along `axis`: out[..., idx..., ...] = x[..., indices[idx...], ...] (NumPy's take
/// with an axis). Indices are clipped into range (NumPy's mode="clip").
Tensor take(const Tensor& x, const Tensor& indices, int64_t axis = 0,
            const std::string& name = "take");

}  // namespace tessel::op
