// The built-in DeviceAPI of CUDA devices (Device.cpp wires it in): memory of a device's primary
// context through the driver; copies to and from the host are synchronous.
#pragma once

#include <memory>

#include "tessel/runtime/Device.h"

namespace tessel::internal {

/// The process's CUDA DeviceAPI. Creating it needs no driver; each use without one throws
/// RuntimeError with cuda_unavailable_reason().
std::shared_ptr<DeviceAPI> cuda_device_api();

}  // namespace tessel::internal
