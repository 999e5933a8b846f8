// Pooling operators of the operator library (docs/operators.md), NCHW: max and average pooling
// with a window, stride and padding, global pooling, adaptive average pooling. pool2d and
// global_pool2d also take blocked activations, (N, C / b, H, W, b) (op::conv2d_nchwc's layout),
// and keep them blocked.
//
//   Tensor y = op::pool2d(x, PoolKind::Max, {3, 3}, {2, 2}, {1, 1, 1, 1});
//
// Padding never counts in a max; in an average it counts when `count_include_pad` (PyTorch's
// default is true). DSLError names the operator and the parameter: a window or stride below 1,
// negative padding, padding of half the window or more, a window larger than the padded input.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "tessel/te/Operation.h"

namespace tessel::op {

/// Max or average.
enum class PoolKind : uint8_t { Max, Avg };
/// "max" or "avg".
const char* pool_kind_name(PoolKind kind);
/// The kind called "max" or "avg"; DSLError naming `param` otherwise.
PoolKind parse_pool_kind(const std::string& name, const char* param = "kind");

/// 2-D pooling of x (N, C, H, W), or blocked (N, C / b, H, W, b): window (R, S), stride, padding
/// (top, left, bottom, right).
Tensor pool2d(const Tensor& x, PoolKind kind, std::array<int64_t, 2> window,
              std::array<int64_t, 2> stride, std::array<int64_t, 4> padding = {0, 0, 0, 0},
              bool count_include_pad = true, const std::string& name = "");

/// Pooling over the whole H x W plane: (N, C, H, W) → (N, C, 1, 1); blocked (N, C / b, H, W, b)
/// → (N, C / b, 1, 1, b), whose elements lie in NCHW's order.
Tensor global_pool2d(const Tensor& x, PoolKind kind, const std::string& name = "");

/// Adaptive average pooling to (out_h, out_w), as PyTorch's AdaptiveAvgPool2d: output row i
/// averages input rows [floor(i * H / out_h), ceil((i + 1) * H / out_h)).
Tensor adaptive_avg_pool2d(const Tensor& x, int64_t out_h, int64_t out_w,
                           const std::string& name = "adaptive_avg_pool2d");

}  // namespace tessel::op
