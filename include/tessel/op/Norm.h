// Normalisations of the operator library (docs/operators.md): softmax, log_softmax, layer_norm,
// rms_norm and batch_norm (inference). Float dtypes only; float16 and bfloat16 inputs are
// computed in float32 (exponentials, sums, statistics) and the result returned in their type.
// Each is a few stages: reductions over the normalised axis (row max, sums), then one
// element-wise stage that reads them.
//
//   Tensor y = op::layer_norm(x, gamma, beta);     // over the last axis, eps 1e-5
//
// DSLError names the operator and the parameter: an axis out of range, a scale or shift of the
// wrong shape, a non-positive epsilon, mismatched dtypes.
#pragma once

#include <string>

#include "tessel/te/Operation.h"

namespace tessel::op {

/// exp(x - max) / sum(exp(x - max)) along `axis` (negative counts from the end).
Tensor softmax(const Tensor& x, int64_t axis = -1, const std::string& name = "softmax");
/// x - max - log(sum(exp(x - max))) along `axis`.
Tensor log_softmax(const Tensor& x, int64_t axis = -1, const std::string& name = "log_softmax");
/// (x - mean) / sqrt(var + eps) * gamma + beta over the last axis; gamma and beta have the last
/// axis's extent (either may be undefined: no scale, no shift).
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps = 1e-5,
                  const std::string& name = "layer_norm");
/// x / sqrt(mean(x^2) + eps) * gamma over the last axis (gamma may be undefined).
Tensor rms_norm(const Tensor& x, const Tensor& gamma, double eps = 1e-6,
                const std::string& name = "rms_norm");
/// (x - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c], channel c on `axis` (1: NCHW), with
/// the running statistics given (inference). The four vectors have the channel extent.
Tensor batch_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor& mean,
                  const Tensor& var, double eps = 1e-5, int64_t axis = 1,
                  const std::string& name = "batch_norm");

}  // namespace tessel::op
