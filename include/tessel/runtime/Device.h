// Devices the runtime knows, and the DeviceAPI hook through which a backend provides memory.
//
// The CPU's and CUDA's DeviceAPIs are built in; register_device_api() replaces one (tests, other
// allocators). The CUDA one opens the driver on first use (runtime/CUDA.h): without a driver or a
// device, every CUDA allocation or copy throws RuntimeError saying why.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "tessel/runtime/DLPack.h"

namespace tessel {

/// The kind of device; the values are DLPack's DLDeviceType.
enum class DeviceType : int32_t {
    CPU = dlpack::kDLCPU,
    CUDA = dlpack::kDLCUDA,
};

/// A device: its type and index among devices of that type.
struct Device {
    DeviceType type = DeviceType::CPU;
    int id = 0;

    /// "cpu:0", "cuda:1".
    std::string str() const;
    bool operator==(const Device& o) const = default;
};

/// "cpu", "cuda".
std::string device_type_name(DeviceType type);

/// The host CPU.
inline constexpr Device cpu() {
    return {DeviceType::CPU, 0};
}
/// CUDA device `id`.
inline constexpr Device cuda(int id = 0) {
    return {DeviceType::CUDA, id};
}

/// Memory management for one device type. Implementations must be thread-safe.
class DeviceAPI {
public:
    virtual ~DeviceAPI() = default;
    /// `bytes` of device memory aligned to `alignment` (a power of two); never null (throws
    /// RuntimeError when out of memory). `bytes` may be 0.
    virtual void* allocate(Device device, size_t bytes, size_t alignment) = 0;
    /// Frees memory returned by allocate() on the same device.
    virtual void free(Device device, void* ptr) = 0;
    /// Copies `bytes` from host memory to device memory.
    virtual void copy_to_device(Device device, void* dst, const void* host_src, size_t bytes) = 0;
    /// Copies `bytes` from device memory to host memory.
    virtual void copy_to_host(Device device, void* host_dst, const void* src, size_t bytes) = 0;
    /// Copies `bytes` from `src` on `src_device` to `dst` on `dst_device`, both devices of this
    /// API's type (they may be the same device). The default stages through host memory.
    virtual void copy_between(Device dst_device, void* dst, Device src_device, const void* src,
                              size_t bytes);
    /// Waits until the work queued on `stream` of `device` (null: on the whole device) is done.
    /// The default has nothing to wait for (synchronous devices).
    virtual void synchronize(Device device, void* stream);
};

/// Installs `api` for every device of `type` (replacing any earlier one). Thread-safe.
void register_device_api(DeviceType type, std::shared_ptr<DeviceAPI> api);

/// The DeviceAPI of `device`'s type (the built-in one unless another was registered); throws
/// RuntimeError for a device type this build has no runtime for.
std::shared_ptr<DeviceAPI> device_api(Device device);

}  // namespace tessel
