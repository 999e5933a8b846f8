// Matrix products of the operator library (docs/operators.md).
//
//   Tensor C = op::matmul(A, B);                          // (M, K) x (K, N)
//   Tensor Y = op::dense(X, W, bias, Activation::ReLU);   // X (M, K), W (N, K): relu(X W^T + b)
//
// Each builds one reduction stage; dense adds one element-wise epilogue stage (bias and
// activation) that default_schedule() fuses into the product's loops. Low precision accumulates
// wide (as PyTorch): float16 and bfloat16 operands are multiplied and summed in float32 and the
// result returned in their own type; int8, uint8, int16 operands in int32, returned as int32.
// `out_dtype` (TOPI's name) chooses the result's type; a wider one widens the accumulator too
// (float64). When the result's type differs from the accumulator's, the reduction is the stage
// "<name>.acc" and a cast stage "<name>" follows it (dense casts in its epilogue).
// The operands have one dtype, except that 8-bit integers of either signedness mix (uint8 x int8,
// the operands of VNNI's dot products and of op/Quantize.h). Misuse throws DSLError naming the
// operator and the parameter: operands that are not 2-D (3-D for batch_matmul), inner extents
// that differ, mismatched dtypes, a bias of the wrong length, an integer out_dtype for float
// operands or one narrower than int32 for integer operands.
//
// `target` (optional, last) is the CPU the product will run on, where it changes the
// computation: int8 x int8 products in int32 on a CPU whose dot-product unit multiplies uint8 by
// int8 (AVX512-VNNI, AVX-VNNI: vpdpbusd) are built as TVM and oneDNN run them there, A shifted
// by +128 into uint8 and the product corrected by 128 times B's column sums, so that the unit
// computes them (stages "<name>.a_shift", "<name>.b_sum", "<name>.dot" and "<name>"; the
// result is the plain product's, bit for bit). Without a target, on a GPU or on a CPU without
// the unit, and for every other type, the product is the plain one.
//
// `allow_tf32` (off by default, as PyTorch's torch.backends.cuda.matmul.allow_tf32): a float32
// product of float32 operands multiplies them rounded to TF32 (round_tf32: 10 mantissa bits, as
// the tensor cores read float32), accumulating in float32. The product then means the same on
// every target and in the reference interpreter, and on a GPU of compute capability 8.0 or newer
// the default schedule runs it on the tensor cores (mma_m16n8k8_tf32), several times faster
// than float32 on the CUDA cores, with about 1e-3 relative error on unit-scale data instead of
// 1e-6. Other types ignore it.
#pragma once

#include <optional>
#include <string>

#include "tessel/Target.h"
#include "tessel/op/Elementwise.h"

namespace tessel::op {

/// C[i, j] = sum_k A[i, k] * B[k, j], with A read as A^T when `transpose_a` (A is then (K, M))
/// and B as B^T when `transpose_b` (B is then (N, K)). `target`: see the file comment (int8 x
/// int8 shifted onto a uint8 x int8 dot-product unit).
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false,
              std::optional<Type> out_dtype = std::nullopt, const std::string& name = "matmul",
              const std::optional<Target>& target = std::nullopt, bool allow_tf32 = false);

/// C[n, i, j] = sum_k A[n, i, k] * B[n, k, j] (transposes as matmul, of the last two axes). A
/// batch extent of 1 in one operand broadcasts.
Tensor batch_matmul(const Tensor& a, const Tensor& b, bool transpose_a = false,
                    bool transpose_b = false, std::optional<Type> out_dtype = std::nullopt,
                    const std::string& name = "batch_matmul",
                    const std::optional<Target>& target = std::nullopt, bool allow_tf32 = false);

/// Y[i, j] = act(sum_k X[i, k] * W[j, k] + bias[j]): a fully connected layer, W of shape
/// (units, K) as in TVM and PyTorch. `bias` may be undefined (Tensor()); it must be (units,).
/// Without bias and activation the product itself is returned. Bias and activation are applied
/// in the accumulator's type, then the result narrowed to `out_dtype`.
Tensor dense(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
             Activation act = Activation::None, std::optional<Type> out_dtype = std::nullopt,
             const std::string& name = "dense", const std::optional<Target>& target = std::nullopt,
             bool allow_tf32 = false);

}  // namespace tessel::op
