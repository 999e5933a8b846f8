// op::default_schedule(): the schedule an operator gets without tuning, the best tuning record
// when one applies.
//
//   Tensor y = op::relu(op::add(op::matmul(a, b), bias));
//   Schedule s = op::default_schedule({y}, Target("llvm"));
//
// The rules themselves are op::default_schedule_rules (op/DefaultSchedule.h, included here); the
// records come from the apply-best context in scope and the shipped tuning logs, as the driver
// decides for build() (driver/Build.h).
#pragma once

#include <vector>

#include "tessel/Target.h"
#include "tessel/op/DefaultSchedule.h"
#include "tessel/schedule/Schedule.h"

namespace tessel::op {

/// The schedule of the DAG of `outputs` for `target`:
///  1. in an apply-best context of this thread (auto_schedule/records/ApplyHistoryBest.h), the
///     context's choice for the DAG and target;
///  2. else, when the shipped logs are on (auto_schedule/records/ShippedLogs.h), their record for
///     the DAG and target if they hold one;
///  3. else default_schedule_rules(outputs, target) (also what rule 1 falls back to).
Schedule default_schedule(const std::vector<Tensor>& outputs, const Target& target);

}  // namespace tessel::op
