// Default schedules of the operator library (docs/operators.md): a schedule for any DAG of
// operators, decent without tuning, for "llvm" and "cuda" targets.
//
//   Tensor y = op::relu(op::add(op::matmul(a, b), bias));
//   Schedule s = op::default_schedule_rules({y}, Target("llvm"));
//
// The rules follow the operator families, recognised from the DAG (DAGAnalysis) rather than from
// names, so they also apply to DAGs built by hand:
//  - injective stages that are not outputs are inlined into their readers (padding, bias,
//    activations, broadcasts), except expensive ones read by several stages (softmax's exp);
//  - a stage that reuses data (matmul, conv: needs_multi_level_tiling) is computed in tiles inside
//    its element-wise consumer, or inside a local cache of itself when it is an output, so that the
//    epilogue runs in the tile's loop nest; on CPUs the tile's innermost loop is vectorised and the
//    outer loops run in parallel; on GPUs the operands' tiles go through shared memory
//    (double-buffered) into per-thread register tiles (src/op/DefaultScheduleGpu.cpp);
//  - other reductions (pooling, norms, sums) run in parallel over their outputs, vectorised when
//    the innermost output axis is not reduced (CPU); on GPUs softmax and the norms take a warp
//    (short rows) or a block per row, row reductions reduce across threads, the rest one thread
//    per output;
//  - remaining injective outputs are fused, vectorised and run in parallel (CPU) or bound to
//    blocks and threads (GPU).
// The schedule is a plain Schedule (a list of steps) that a user or the tuner may extend.
#pragma once

#include <vector>

#include "tessel/Target.h"
#include "tessel/schedule/Schedule.h"

namespace tessel::op {

/// The rule-based schedule of the file comment, never a tuning record (the measurement's trusted
/// reference and the tuner's first trial use it). op::default_schedule (driver/DefaultSchedule.h)
/// returns the best tuning record instead when one applies.
Schedule default_schedule_rules(const std::vector<Tensor>& outputs, const Target& target);

}  // namespace tessel::op
