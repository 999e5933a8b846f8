// build() of a schedule: what a schedule without steps becomes, then lowering and the backend.
//
//   Module m = build(s, {A, B, C}, Target("llvm -mattr=+avx2"));   // or the string itself
//   m.get("main")({a, b, c});
//
// The driver is the top layer of the compiler (docs/architecture.md, "Layers"): it alone decides
// what a schedule without steps is compiled as, from the tuning records in scope, the shipped
// tuning logs and the operator library's rules, so that codegen compiles what it is given and the
// operator library and the tuner know nothing of each other's choices. build() of a lowered
// function is codegen/Build.h (included here).
#pragma once

#include <string>
#include <vector>

#include "tessel/Target.h"
#include "tessel/codegen/Build.h"
#include "tessel/schedule/Schedule.h"

namespace tessel {

/// What build() compiles for `s` on `target`: `s` itself when it has steps (a schedule with steps
/// is the caller's and is never replaced). Without steps:
///  1. in an apply-best context of this thread (auto_schedule/records/ApplyHistoryBest.h), the
///     context's choice for the DAG and target, else the operator library's rules
///     (op::default_schedule_rules);
///  2. else, when `shipped_logs` and the shipped logs are on (auto_schedule/records/ShippedLogs.h),
///     their record for the DAG and target if they hold one;
///  3. else `s`, the loop nest as written.
/// A caller that hands a build to another thread resolves the schedule first (the context is the
/// thread's).
Schedule schedule_for_build(const Schedule& s, const Target& target, bool shipped_logs = true);

/// Lowers schedule_for_build(s, target, options.tuning_logs) over `args` for `target` (lower() in
/// lower/Lower.h) and compiles it into a module with one kernel called `name`. When the schedule
/// pre-transforms constant operands (Schedule::pre_transform, a layout rewrite), the module has
/// a second kernel, `<name>_pre_transform` (lower_pre_transform), which the caller runs once on
/// the weights; the kernel `name` then takes each transformed weight in its weight's place.
/// llvm targets need
/// the LLVM backend, cuda targets NVRTC (CompileError naming the missing backend, before
/// lowering). Throws CompileError for an unknown argument name in `options` or IR the backend
/// cannot compile, ScheduleError for a schedule that cannot be lowered for the target
/// (docs/target.md lists the targets).
Module build(const Schedule& s, const std::vector<Tensor>& args, const Target& target,
             const std::string& name = "main", const BuildOptions& options = {});

/// build() for the target string `target`, parsed once (Target(target)): "llvm" (this machine),
/// "llvm -mcpu=<cpu>", "llvm -mattr=+avx2,-fma,...", "llvm -fast-math", "llvm -strict-float",
/// "cuda", "cuda -arch=sm_90"; CompileError for any other string (docs/target.md).
Module build(const Schedule& s, const std::vector<Tensor>& args, const std::string& target = "llvm",
             const std::string& name = "main", const BuildOptions& options = {});

}  // namespace tessel
