// Matrix products of the operator library (docs/operators.md).
//
//   Tensor C = op::matmul(A, B);                          // (M, K) x (K, N)
//   Tensor Y = op::dense(X, W, bias, Activation::ReLU);   // X (M, K), W (N, K): relu(X W^T + b)
//
// Each builds one reduction stage (summing in the operands' dtype); dense adds one element-wise
// epilogue stage (bias and activation) that default_schedule() fuses into the product's loops.
// Misuse throws DSLError naming the operator and the parameter: operands that are not 2-D (3-D
// for batch_matmul), inner extents that differ, mismatched dtypes, a bias of the wrong length.
#pragma once

#include <string>

#include "tessel/op/Elementwise.h"

namespace tessel::op {

/// C[i, j] = sum_k A[i, k] * B[k, j], with A read as A^T when `transpose_a` (A is then (K, M))
/// and B as B^T when `transpose_b` (B is then (N, K)).
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false,
              const std::string& name = "matmul");

/// C[n, i, j] = sum_k A[n, i, k] * B[n, k, j] (transposes as matmul, of the last two axes). A
/// batch extent of 1 in one operand broadcasts.
Tensor batch_matmul(const Tensor& a, const Tensor& b, bool transpose_a = false,
                    bool transpose_b = false, const std::string& name = "batch_matmul");

/// Y[i, j] = act(sum_k X[i, k] * W[j, k] + bias[j]): a fully connected layer, W of shape
/// (units, K) as in TVM and PyTorch. `bias` may be undefined (Tensor()); it must be (units,).
/// Without bias and activation the product itself is returned.
Tensor dense(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
             Activation act = Activation::None, const std::string& name = "dense");

}  // namespace tessel::op
