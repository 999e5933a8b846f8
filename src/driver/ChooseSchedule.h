// The one place that decides what a schedule without steps becomes (driver/Build.h,
// driver/DefaultSchedule.h): the thread's apply-best context, else the shipped tuning logs, else
// a fallback that differs by caller.
#pragma once

#include <functional>
#include <vector>

#include "tessel/Target.h"
#include "tessel/schedule/Schedule.h"

namespace tessel::internal {

/// The schedule of the DAG of `outputs` on `target`: in an apply-best context of this thread, its
/// choice (falling back to op::default_schedule_rules); else, when `shipped_logs` and the shipped
/// logs are on, their record for the DAG and target if they hold one; else `unmatched()`.
Schedule choose_schedule(const std::vector<Tensor>& outputs, const Target& target,
                         const std::function<Schedule()>& unmatched, bool shipped_logs);

}  // namespace tessel::internal
