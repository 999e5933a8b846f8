// VerifySchedule: whether a schedule can be lowered and built for a target, answered on the
// Schedule itself, without building its loop nests.
//
// The primitives check what a step makes visible at once (schedule/Schedule.h); what needs the
// finished schedule, its bounds or the target is checked here, and lower() runs this check first
// when it is given a target (the "verify_schedule" pass). The searcher calls it to drop a
// candidate before spending a lowering on it. Checks:
//  - every stage computed at a loop has all its readers inside that loop;
//  - GPU thread mapping (lower/VerifyThreadMapping.h), with the target's threads-per-block limit;
//  - a CPU target: no loop bound to blockIdx/threadIdx (vthread runs serially; a CompileError: the
//  target does not fit the
//    schedule);
//  - every vectorized or unrolled loop whose extent depends on where its stage is computed
//    (Schedule::annotate left it to the finished schedule) has, inside its attach point, a
//    constant extent within the schedule's vector lane or unroll cap;
//  - a GPU target: every shared or local stage is computed inside a kernel, and the shared memory
//    of each kernel (its shared stages' storage, as bound inference sizes it) fits the target's
//    opt-in limit per block.
// Other violations throw ScheduleError naming the stage, the loops and the limit.
#pragma once

#include <vector>

#include "tessel/Target.h"
#include "tessel/schedule/InferBounds.h"
#include "tessel/schedule/Schedule.h"

namespace tessel {

/// Checks that `s` can be lowered and built for `target` (see the file comment). When the check
/// inferred the bounds (a GPU schedule with shared stages) and `bounds` is given, they are left
/// there for the caller (lower() hands them to schedule_ops); otherwise `bounds` is unchanged.
void verify_schedule(const Schedule& s, const Target& target,
                     std::vector<StageBounds>* bounds = nullptr);

/// The target-independent check of vectorized and unrolled loops whose extents depend on where
/// their stages are computed (see the file comment); part of verify_schedule, and what lower()
/// runs without a target. Bound inference runs only when the schedule has such a loop, and
/// reuses `*bounds` when they are given (non-empty); bounds it inferred are left there.
void verify_annotated_extents(const Schedule& s, std::vector<StageBounds>* bounds = nullptr);

}  // namespace tessel
