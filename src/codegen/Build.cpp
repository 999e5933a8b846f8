// build() of a lowered function: the backend of the target's kind compiles it.
#include "tessel/codegen/Build.h"

#include "codegen/Backends.h"
#include "tessel/Error.h"

namespace tessel {

void require_backend(const Target& target) {
    if (target.kind() == TargetKind::LLVM)
        internal::check_llvm_backend(target);
    else
        internal::check_cuda_backend(target);
}

Module build(const LoweredFunc& f, const Target& target, const BuildOptions& options) {
    if (target.kind() == TargetKind::LLVM) return internal::build_llvm({f}, target, options);
    return internal::build_cuda(f, target, options);
}

Module build(const std::vector<LoweredFunc>& fs, const Target& target,
             const BuildOptions& options) {
    if (fs.size() == 1) return build(fs[0], target, options);
    if (fs.empty()) TESSEL_THROW(CompileError) << "build: no function to compile";
    if (target.kind() != TargetKind::LLVM)
        TESSEL_THROW(CompileError)
            << "build: " << fs.size()
            << " functions in one module (a kernel and its pre_transform) are built for CPU "
               "targets only; the "
            << target.str() << " backend compiles one function a module";
    return internal::build_llvm(fs, target, options);
}

Module build(const LoweredFunc& f, const std::string& target, const BuildOptions& options) {
    return build(f, Target(target), options);
}

}  // namespace tessel
