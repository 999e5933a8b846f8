// The LLVM backend in a tessel built without it (TESSEL_USE_LLVM=OFF): a clear error.
#include "codegen/Backends.h"
#include "tessel/Error.h"
#include "tessel/codegen/Build.h"
#include "tessel/codegen/Export.h"

namespace tessel {

namespace {

[[noreturn]] void no_backend(const std::string& target) {
    TESSEL_THROW(CompileError) << "cannot build for target '" << target
                               << "': this tessel was built without the LLVM backend "
                                  "(configure with -DTESSEL_USE_LLVM=ON and install llvm-19-dev)";
}

}  // namespace

namespace internal {

void check_llvm_backend(const Target& target) {
    no_backend(target.str());
}

Module build_llvm(const std::vector<LoweredFunc>&, const Target& target, const BuildOptions&) {
    no_backend(target.str());
}

}  // namespace internal

void register_llvm_payload_loader() {}

void export_object(const Module&, const std::string&) {
    no_backend("llvm");
}

void export_library(const Module&, const std::string&) {
    no_backend("llvm");
}

std::string c_header(const Module&) {
    no_backend("llvm");
}

void export_header(const Module&, const std::string&) {
    no_backend("llvm");
}

bool has_llvm_backend() {
    return false;
}

}  // namespace tessel
