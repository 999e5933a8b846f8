// build(): lowers a schedule for a target and hands the lowered function to the backend of the
// target's kind.
#include "tessel/codegen/Build.h"

#include "codegen/Backends.h"
#include "tessel/auto_schedule/ApplyHistoryBest.h"
#include "tessel/lower/Lower.h"

namespace tessel {

Module build(const Schedule& s, const std::vector<Tensor>& args, const Target& target,
             const std::string& name, const BuildOptions& options) {
    // A missing backend fails before lowering.
    if (target.kind() == TargetKind::LLVM)
        internal::check_llvm_backend(target);
    else
        internal::check_cuda_backend(target);
    // A schedule without steps means "the best you have" inside an apply-best context, and the
    // shipped logs' record where they hold one.
    Schedule chosen = schedule_for_build(s, target, options.tuning_logs);
    return build(lower(chosen, args, target, name, options.lower), target, options);
}

Module build(const Schedule& s, const std::vector<Tensor>& args, const std::string& target,
             const std::string& name, const BuildOptions& options) {
    return build(s, args, Target(target), name, options);
}

Module build(const LoweredFunc& f, const Target& target, const BuildOptions& options) {
    if (target.kind() == TargetKind::LLVM) return internal::build_llvm(f, target, options);
    return internal::build_cuda(f, target, options);
}

Module build(const LoweredFunc& f, const std::string& target, const BuildOptions& options) {
    return build(f, Target(target), options);
}

}  // namespace tessel
