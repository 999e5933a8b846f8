// build() of a schedule (driver/Build.h): the schedule chosen, lowered, and handed to codegen.
#include "tessel/driver/Build.h"

#include "driver/ChooseSchedule.h"
#include "tessel/lower/Lower.h"

namespace tessel {

Schedule schedule_for_build(const Schedule& s, const Target& target, bool shipped_logs) {
    if (!s.steps().empty()) return s;
    return internal::choose_schedule(
        s.outputs(), target, [&] { return s; }, shipped_logs);
}

Module build(const Schedule& s, const std::vector<Tensor>& args, const Target& target,
             const std::string& name, const BuildOptions& options) {
    require_backend(target);  // a missing backend fails before lowering
    Schedule chosen = schedule_for_build(s, target, options.tuning_logs);
    LoweredFunc kernel = lower(chosen, args, target, name, options.lower);
    if (!has_pre_transform(chosen)) return build(kernel, target, options);
    // Layout rewrite: the kernel and the one-time transform of its weights, in one module.
    LoweredFunc transform =
        lower_pre_transform(chosen, args, target, pre_transform_name(name), options.lower);
    return build(std::vector<LoweredFunc>{std::move(kernel), std::move(transform)}, target,
                 options);
}

Module build(const Schedule& s, const std::vector<Tensor>& args, const std::string& target,
             const std::string& name, const BuildOptions& options) {
    return build(s, args, Target(target), name, options);
}

}  // namespace tessel
