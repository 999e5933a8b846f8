// build(): lowers a schedule and hands the lowered function to the backend the target names.
#include "tessel/codegen/Build.h"

#include "codegen/Backends.h"
#include "codegen/Signature.h"
#include "tessel/Error.h"
#include "tessel/lower/Lower.h"

namespace tessel {

namespace {

[[noreturn]] void unknown_target(const std::string& target) {
    TESSEL_THROW(CompileError) << "build: unknown target '" << target
                               << "' (targets start with 'llvm' or 'cuda')";
}

}  // namespace

Module build(const Schedule& s, const std::vector<Tensor>& args, const std::string& target,
             const std::string& name, const BuildOptions& options) {
    // A bad target fails before lowering.
    std::string kind = internal::target_kind(target);
    if (kind == "llvm")
        internal::check_llvm_target(target);
    else if (kind == "cuda")
        internal::check_cuda_target(target);
    else
        unknown_target(target);
    return build(lower(s, args, name), target, options);
}

Module build(const LoweredFunc& f, const std::string& target, const BuildOptions& options) {
    std::string kind = internal::target_kind(target);
    if (kind == "llvm") return internal::build_llvm(f, target, options);
    if (kind == "cuda") return internal::build_cuda(f, target, options);
    unknown_target(target);
}

}  // namespace tessel
