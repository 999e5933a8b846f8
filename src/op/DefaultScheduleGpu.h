// The default schedules for "cuda" targets (op/DefaultSchedule.h, docs/operators.md "GPU
// default schedules"): row groups (softmax, norms) a warp or a block per row, row reductions
// across threads, matmul-like and conv stages in shared-memory tiles with register tiles.
#pragma once

#include <vector>

#include "tessel/Target.h"
#include "tessel/schedule/Schedule.h"

namespace tessel::op::internal {

/// The rule-based default schedule of `outputs` for a GPU target.
Schedule default_schedule_gpu(const std::vector<Tensor>& outputs, const Target& target);

}  // namespace tessel::op::internal
