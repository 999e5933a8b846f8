// build() in a tessel built without the LLVM backend (TESSEL_USE_LLVM=OFF): a clear error.
#include "tessel/Error.h"
#include "tessel/codegen/Build.h"

namespace tessel {

namespace {

[[noreturn]] void no_backend(const std::string& target) {
    TESSEL_THROW(CompileError) << "cannot build for target '" << target
                               << "': this tessel was built without the LLVM backend "
                                  "(configure with -DTESSEL_USE_LLVM=ON and install llvm-19-dev)";
}

}  // namespace

Module build(const Schedule&, const std::vector<Tensor>&, const std::string& target,
             const std::string&, const BuildOptions&) {
    no_backend(target);
}

Module build(const LoweredFunc&, const std::string& target, const BuildOptions&) {
    no_backend(target);
}

void register_llvm_payload_loader() {}

bool has_llvm_backend() {
    return false;
}

}  // namespace tessel
