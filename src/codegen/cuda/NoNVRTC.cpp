// NVRTC in a tessel built without the CUDA toolkit (TESSEL_USE_CUDA=OFF): a clear error.
#include "codegen/cuda/NVRTC.h"
#include "tessel/Error.h"

namespace tessel::internal {

bool has_nvrtc() {
    return false;
}

NvrtcResult nvrtc_compile(const std::string&, const std::string&, const std::vector<std::string>&) {
    TESSEL_THROW(CompileError) << "cannot build for target 'cuda': this tessel was built without "
                                  "the CUDA backend (configure with -DTESSEL_USE_CUDA=ON and "
                                  "install the CUDA toolkit's NVRTC)";
}

}  // namespace tessel::internal
