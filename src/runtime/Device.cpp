// The DeviceAPI registry and the built-in CPU DeviceAPI (the CUDA one: runtime/cuda/).
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "runtime/cuda/CudaDeviceAPI.h"
#include "tessel/Error.h"
#include "tessel/runtime/Device.h"

namespace tessel {
namespace internal {
namespace {

class CpuDeviceAPI final : public DeviceAPI {
public:
    void* allocate(Device, size_t bytes, size_t alignment) override {
        // aligned_alloc wants a size that is a multiple of the alignment, and non-zero.
        size_t rounded = (bytes + alignment - 1) / alignment * alignment;
        if (rounded == 0) rounded = alignment;
        void* ptr = std::aligned_alloc(alignment, rounded);
        if (!ptr)
            TESSEL_THROW(RuntimeError) << "out of host memory allocating " << bytes << " bytes";
        return ptr;
    }
    void free(Device, void* ptr) override { std::free(ptr); }
    void copy_to_device(Device, void* dst, const void* src, size_t bytes) override {
        if (bytes) std::memcpy(dst, src, bytes);
    }
    void copy_to_host(Device, void* dst, const void* src, size_t bytes) override {
        if (bytes) std::memcpy(dst, src, bytes);
    }
};

struct Registry {
    std::mutex mutex;
    // Wired here rather than registered by static initialisers, which a static library drops.
    std::map<DeviceType, std::shared_ptr<DeviceAPI>> apis{
        {DeviceType::CPU, std::make_shared<CpuDeviceAPI>()},
        {DeviceType::CUDA, cuda_device_api()}};
};

Registry& registry() {
    static Registry r;
    return r;
}

}  // namespace
}  // namespace internal

void DeviceAPI::copy_between(Device dst_device, void* dst, Device src_device, const void* src,
                             size_t bytes) {
    std::vector<char> staging(bytes);
    copy_to_host(src_device, staging.data(), src, bytes);
    copy_to_device(dst_device, dst, staging.data(), bytes);
}

void DeviceAPI::synchronize(Device, void*) {}

std::string device_type_name(DeviceType type) {
    switch (type) {
        case DeviceType::CPU: return "cpu";
        case DeviceType::CUDA: return "cuda";
    }
    return "device type " + std::to_string(static_cast<int>(type));
}

std::string Device::str() const {
    return device_type_name(type) + ":" + std::to_string(id);
}

void register_device_api(DeviceType type, std::shared_ptr<DeviceAPI> api) {
    auto& r = internal::registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.apis[type] = std::move(api);
}

std::shared_ptr<DeviceAPI> device_api(Device device) {
    auto& r = internal::registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.apis.find(device.type);
    if (it != r.apis.end() && it->second) return it->second;
    TESSEL_THROW(RuntimeError) << "no runtime for device " << device.str() << " in this build";
}

}  // namespace tessel
