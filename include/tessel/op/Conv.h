// Convolutions of the operator library (docs/operators.md): conv2d in NCHW and NHWC with padding,
// stride, dilation and groups, conv2d on blocked activations (NCHW[x]c) with the layout
// transforms into and out of it, depthwise conv2d, and conv2d_transpose.
//
//   Conv2DParams p;  p.stride = {2, 2};  p.padding = {1, 1, 1, 1};
//   Tensor y = op::conv2d_nchw(x, w, p);            // x (N, C, H, W), w (K, C / groups, R, S)
//
// Zero padding is a stage of its own (`<name>.pad`, a select on the bounds) that
// default_schedule() inlines into the convolution. The convolution accumulates as matmul does
// (op/Matmul.h): float16/bfloat16 in float32, 8- and 16-bit integers in int32, with
// `Conv2DParams::out_dtype` choosing the result's type ("<name>.acc" and a cast stage when it
// differs from the accumulator's). x and w have one dtype, or are 8-bit integers of either
// signedness (uint8 x int8, as matmul).
// DSLError names the operator and the parameter: negative padding, a stride or dilation below 1,
// groups that do not divide the channels, a channel mismatch, a (dilated) kernel larger than the
// padded input, operands of the wrong rank or of different dtypes, an out_dtype as matmul refuses.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "tessel/te/Operation.h"

namespace tessel::op {

/// The parameters every conv2d variant takes.
struct Conv2DParams {
    std::array<int64_t, 2> stride = {1, 1};         ///< (vertical, horizontal), each >= 1
    std::array<int64_t, 4> padding = {0, 0, 0, 0};  ///< (top, left, bottom, right), each >= 0
    std::array<int64_t, 2> dilation = {1, 1};       ///< (vertical, horizontal), each >= 1
    int64_t groups = 1;                             ///< divides the input and output channels
    std::optional<Type> out_dtype = std::nullopt;   ///< the result's type (unset: the default)
};

/// Padding of `p` on every side.
Conv2DParams conv_params(int64_t stride, int64_t padding, int64_t dilation = 1, int64_t groups = 1);

/// Output extent of a convolution over `in` (already without padding) along one axis.
int64_t conv_output_extent(int64_t in, int64_t kernel, int64_t stride, int64_t pad_before,
                           int64_t pad_after, int64_t dilation);

/// NCHW conv2d: x (N, C, H, W), w (K, C / groups, R, S) → (N, K, OH, OW).
Tensor conv2d_nchw(const Tensor& x, const Tensor& w, const Conv2DParams& p = {},
                   const std::string& name = "conv2d_nchw");

/// NHWC conv2d: x (N, H, W, C), w (R, S, C / groups, K) (HWIO) → (N, OH, OW, K).
Tensor conv2d_nhwc(const Tensor& x, const Tensor& w, const Conv2DParams& p = {},
                   const std::string& name = "conv2d_nhwc");

/// conv2d on blocked activations, NCHW[x]c (oneDNN's nChw16c, TVM's conv2d_NCHWc): x (N, C / cb,
/// H, W, cb), w (K / kb, C / cb, R, S, cb, kb) → (N, K / kb, OH, OW, kb), where cb and kb are x's
/// and w's last extents (x's channel block, w's output-channel block): channel c of x is x[n, c /
/// cb, h, w, c % cb]. A pixel's block of channels is contiguous, so the CPU default computes it
/// in register tiles of whole vectors of output channels (docs/operators.md, "Blocked
/// activations"). Groups of 1 only (DSLError otherwise).
Tensor conv2d_nchwc(const Tensor& x, const Tensor& w, const Conv2DParams& p = {},
                    const std::string& name = "conv2d_nchwc");

/// conv2d_nchwc's 3 x 3 convolution (stride and dilation 1, float32) by Winograd's minimal
/// filtering F(2 x 2, 3 x 3): the same operands and result, in 16 matrix products of 2.25 x
/// fewer multiply-adds (docs/operators.md, "Winograd"). Its stages: `<name>.winograd_input`
/// V (4, 4, tiles, C), the input's 4 x 4 tiles (2 apart, zero past the edges) transformed (Bᵀ d
/// B); `<name>.winograd_weight` U (4, 4, C, K), the filters transformed (G g Gᵀ);
/// `<name>.winograd_product` M (4, 4, tiles, K), V times U over the input channels; and the
/// output (Aᵀ m A of each 2 x 2 tile). tiles = N * ceil(OH / 2) * ceil(OW / 2). The CPU default
/// schedule recognises the stages by these names: the product as a batch of GEMMs, the
/// transformed weight laid out in its panels (once, outside the kernel, when `w` is constant).
/// Results differ from the direct convolution's by rounding (about 1e-6 relative).
/// DSLError as conv2d_nchwc's, and for a window other than 3 x 3, a stride, dilation or groups
/// other than 1, or a dtype other than float32.
Tensor conv2d_nchwc_winograd(const Tensor& x, const Tensor& w, const Conv2DParams& p = {},
                             const std::string& name = "conv2d_nchwc_winograd");

/// conv2d_nchw's 3 x 3 convolution (stride and dilation 1, float32) by Winograd's F(2 x 2,
/// 3 x 3) on NCHW operands: the input is put in blocks of channels (`<name>.winograd_layout`, N,
/// C / b, H, W, b with b the widest of 16, 8, 4, 2 and 1 dividing C and K), convolved as
/// conv2d_nchwc_winograd does (its stages named after `name`, the blocked output
/// `<name>.winograd_output`) with the filters read from `w` (K, C, 3, 3) directly, and the output
/// put back to (N, K, OH, OW) (`name`). The two layout copies cost a pass over the input and the
/// output each (docs/operators.md, "Winograd"). DSLError as conv2d_nchw's, and as
/// conv2d_nchwc_winograd's for the window, stride, dilation, groups and dtype.
Tensor conv2d_nchw_winograd(const Tensor& x, const Tensor& w, const Conv2DParams& p = {},
                            const std::string& name = "conv2d_nchw_winograd");

/// x (N, C, H, W) in blocks of `block` channels: (N, C / block, H, W, block); `block` divides C.
Tensor nchw_to_nchwc(const Tensor& x, int64_t block, const std::string& name = "nchw_to_nchwc");

/// x (N, C / b, H, W, b) back to (N, C, H, W).
Tensor nchwc_to_nchw(const Tensor& x, const std::string& name = "nchwc_to_nchw");

/// A conv2d_nchw weight (K, C, R, S) as conv2d_nchwc's: (K / kb, C / cb, R, S, cb, kb), where cb
/// is the input's channel block and kb the output's; each divides its channels.
Tensor conv2d_weight_to_nchwc(const Tensor& w, int64_t cb, int64_t kb,
                              const std::string& name = "conv2d_weight_to_nchwc");

/// Depthwise NCHW conv2d: x (N, C, H, W), w (C * M, 1, R, S) → (N, C * M, OH, OW); conv2d_nchw
/// with groups = C (p.groups is ignored).
Tensor depthwise_conv2d_nchw(const Tensor& x, const Tensor& w, Conv2DParams p = {},
                             const std::string& name = "depthwise_conv2d_nchw");

/// NCHW transposed convolution (the gradient of conv2d_nchw with respect to its input, as
/// PyTorch's ConvTranspose2d without groups): x (N, C, H, W), w (C, K, R, S) → (N, K, OH, OW) with
/// OH = (H - 1) * stride - pad_top - pad_bottom + dilation * (R - 1) + output_padding + 1.
/// `output_padding` (each below the stride or the dilation) adds rows and columns at the end.
Tensor conv2d_transpose_nchw(const Tensor& x, const Tensor& w, const Conv2DParams& p = {},
                             std::array<int64_t, 2> output_padding = {0, 0},
                             const std::string& name = "conv2d_transpose_nchw");

}  // namespace tessel::op
