// NVRTC: CUDA C to PTX and cubin, with a process-wide compile cache.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessel/runtime/CudaLaunchPlan.h"

namespace tessel::internal {

/// What an NVRTC compile produced.
struct NvrtcResult {
    std::string ptx;
    std::vector<uint8_t> cubin;
    std::string log;  ///< NVRTC's log, including ptxas's verbose resource report
    /// ptxas's report by __global__ function name.
    std::map<std::string, CudaResources> resources;
};

/// True when this tessel was built with NVRTC (TESSEL_USE_CUDA).
bool has_nvrtc();

/// Compiles `source` for `arch` ("sm_90") with `options` (extra NVRTC options). Results are
/// cached in memory by (source, arch, options). Throws CompileError with NVRTC's log and the
/// numbered source lines the errors point at.
NvrtcResult nvrtc_compile(const std::string& source, const std::string& arch,
                          const std::vector<std::string>& options);

}  // namespace tessel::internal
