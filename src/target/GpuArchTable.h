// The limits of NVIDIA GPUs by architecture, for targets whose GPU is not in this machine.
#pragma once

#include <string>
#include <vector>

#include "tessel/Target.h"

namespace tessel::internal {

/// The limits of architecture `arch` ("sm_90"; an "a" or "f" suffix is ignored), or nullptr when
/// the table does not know it. The SM count is that of the part named in GpuArchTable.cpp.
const GpuLimits* gpu_arch_limits(const std::string& arch);

/// The architectures of the table, in increasing order ("sm_70", ...).
std::vector<std::string> gpu_arch_names();

/// `arch` without its "a" / "f" suffix ("sm_90a" → "sm_90").
std::string gpu_base_arch(const std::string& arch);

}  // namespace tessel::internal
