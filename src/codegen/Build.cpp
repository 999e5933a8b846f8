// build() of a lowered function: the backend of the target's kind compiles it.
#include "tessel/codegen/Build.h"

#include "codegen/Backends.h"

namespace tessel {

void require_backend(const Target& target) {
    if (target.kind() == TargetKind::LLVM)
        internal::check_llvm_backend(target);
    else
        internal::check_cuda_backend(target);
}

Module build(const LoweredFunc& f, const Target& target, const BuildOptions& options) {
    if (target.kind() == TargetKind::LLVM) return internal::build_llvm(f, target, options);
    return internal::build_cuda(f, target, options);
}

Module build(const LoweredFunc& f, const std::string& target, const BuildOptions& options) {
    return build(f, Target(target), options);
}

}  // namespace tessel
