// Quantized inference operators (docs/operators.md, "Quantized operators"): int8 / uint8 matrix
// products and convolutions with an int32 accumulator and a requantize epilogue, computing what
// onnxruntime's QLinearMatMul and QLinearConv compute, bit for bit.
//
//   op::QuantParams xq{x_scale, x_zero_point}, wq{w_scale, w_zero_point}, yq{y_scale, y_zp};
//   Tensor y = op::qlinear_conv2d_nchw(x, xq, w, wq, yq, bias, op::conv_params(2, 1));
//
// A quantized tensor q stands for the real values (q - zero_point) * scale. As in ONNX, scales
// and zero points are tensors (placeholders, usually): a scale is float32, a zero point has its
// tensor's dtype (int8 or uint8; the result's zero point chooses the result's dtype), each of
// shape () or (1,) for one value per tensor, or (channels,) for one per output channel where the
// operator allows it (the weight's, and requantize's along its axis).
//
// The result is
//
//     y = saturate(round_half_to_even(float32(acc) * multiplier) + y_zero_point)
//     acc = sum_k (x[k] - x_zero_point) * (w[k] - w_zero_point) + bias        (int32)
//     multiplier = float32(float32(x_scale * w_scale) / y_scale)
//
// as onnxruntime computes it (ComputeOutputScale, MlasRequantizeOutput): the multiplier in
// float32, the accumulator converted to float32 and multiplied once, rounded half to even, and
// saturated to the result type's range. The zero points are not subtracted inside the product:
//
//     acc = sum_k x[k] * w[k] - x_zp * sum_k w[k] - w_zp * sum_k x[k] + K * x_zp * w_zp + bias
//
// so the product stays the plain int8 reduction of op::matmul / op::conv2d_nchw ("<name>.acc",
// for a u8 x s8 dot-product instruction to tensorize), the sums of x ("<name>.x_sum") and of the
// weight ("<name>.w_sum", a function of the weight alone) are small reductions of their own, and
// the corrections, the bias and the requantization are one element-wise stage ("<name>"), beside
// "<name>.multiplier". A convolution pads x with x_zero_point (a real zero, as onnxruntime's
// im2col does), in the stage "<name>.pad".
//
// DSLError names the operator and the parameter (ONNX's names: "x_scale", "w_zero_point", "B"):
// a float or 16-bit operand, a zero point of another dtype than its tensor (or not 8-bit), a scale
// that is not float32, a per-tensor scale or zero point of more than one value, a per-channel one
// of the wrong length, a bias that is not int32 of one value per output channel, and the checks of
// matmul, dense and conv2d_nchw.
#pragma once

#include <cstdint>
#include <string>

#include "tessel/op/Conv.h"

namespace tessel::op {

/// How a quantized tensor maps to real values: real = (q - zero_point) * scale.
struct QuantParams {
    Tensor scale;       ///< float32; shape () or (1,), or (channels,) where allowed
    Tensor zero_point;  ///< the quantized tensor's dtype (int8 or uint8); shaped as a scale
};

/// y = saturate(round_half_to_even(float32(x) * scale) + zero_point): int32 values (an
/// accumulator) to the dtype of `zero_point` (int8 or uint8). `scale` (float32) and `zero_point`
/// each hold one value, or one per index of x's axis `axis` (negative counts from the end).
Tensor requantize(const Tensor& x, const Tensor& scale, const Tensor& zero_point, int64_t axis = 1,
                  const std::string& name = "requantize");

/// ONNX's QLinearMatMul of 2-D operands: a (M, K) times b (K, N), quantized by `aq`, `bq`, the
/// result by `yq` (its dtype: yq.zero_point's). a's scale and zero point are per-tensor; b's
/// per-tensor or per column, (N,). The product is op::matmul(a, b).
Tensor qlinear_matmul(const Tensor& a, const QuantParams& aq, const Tensor& b,
                      const QuantParams& bq, const QuantParams& yq,
                      const std::string& name = "qlinear_matmul");

/// A quantized fully connected layer, op::dense's layout: x (M, K) times weight (N, K)^T, plus
/// `bias` (int32, (N,), added to the accumulator as QLinearConv's B; may be undefined). x's scale
/// and zero point are per-tensor, the weight's per-tensor or per output unit, (N,).
Tensor qlinear_dense(const Tensor& x, const QuantParams& xq, const Tensor& w, const QuantParams& wq,
                     const QuantParams& yq, const Tensor& bias = Tensor(),
                     const std::string& name = "qlinear_dense");

/// ONNX's QLinearConv in NCHW: x (N, C, H, W), w (K, C / groups, R, S), bias int32 (K,) or
/// undefined; stride, padding, dilation and groups as conv2d_nchw (p.out_dtype must be unset: the
/// result's dtype is yq.zero_point's). The weight's scale and zero point are per-tensor or per
/// output channel, (K,).
Tensor qlinear_conv2d_nchw(const Tensor& x, const QuantParams& xq, const Tensor& w,
                           const QuantParams& wq, const QuantParams& yq,
                           const Tensor& bias = Tensor(), const Conv2DParams& p = {},
                           const std::string& name = "qlinear_conv2d_nchw");

}  // namespace tessel::op
