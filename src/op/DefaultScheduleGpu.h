// The default schedules for "cuda" targets (op/DefaultSchedule.h, docs/operators.md "GPU
// default schedules"): row groups (softmax, norms) a warp or a block per row, row reductions
// across threads, matmul-like and conv stages in shared-memory tiles with register tiles.
#pragma once

#include <cstdint>
#include <vector>

#include "tessel/Target.h"
#include "tessel/schedule/Schedule.h"

namespace tessel::op::internal {

/// The rule-based default schedule of `outputs` for a GPU target.
Schedule default_schedule_gpu(const std::vector<Tensor>& outputs, const Target& target);

/// Split-K: the parts a 2-D m x n product's reduction of length k is split into by the default
/// schedule on `target` (1: not split): where its 64 x 64 tiles leave SMs idle, a divisor of k
/// whose parts are at least 128 long, chosen by a model of the waves and the partial sums'
/// traffic.
int64_t split_k_parts(int64_t m, int64_t n, int64_t k, const Target& target);

}  // namespace tessel::op::internal
