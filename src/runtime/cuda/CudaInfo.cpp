// The public driver queries of tessel/runtime/CUDA.h.
#include <map>
#include <mutex>

#include "runtime/cuda/CudaDriver.h"
#include "tessel/Error.h"
#include "tessel/runtime/CUDA.h"

namespace tessel {

namespace {

using namespace internal::cuda;

CudaDeviceInfo query_device_info(int id) {
    const DriverApi& api = driver();
    CudaDeviceInfo info;
    auto attr = [id](DeviceAttribute a) { return device_attribute(id, a); };
    CUdevice device = 0;
    check(api.cuDeviceGet(&device, id), "cuDeviceGet(" + std::to_string(id) + ")");
    char name[256] = {};
    check(api.cuDeviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName");
    info.name = name;
    info.compute_major = attr(kComputeCapabilityMajor);
    info.compute_minor = attr(kComputeCapabilityMinor);
    info.multiprocessors = attr(kMultiprocessorCount);
    info.max_threads_per_block = attr(kMaxThreadsPerBlock);
    info.warp_size = attr(kWarpSize);
    for (int d = 0; d < 3; ++d) {
        info.max_block_dim[d] = attr(static_cast<DeviceAttribute>(kMaxBlockDimX + d));
        info.max_grid_dim[d] = attr(static_cast<DeviceAttribute>(kMaxGridDimX + d));
    }
    info.registers_per_block = attr(kMaxRegistersPerBlock);
    info.shared_bytes_per_block = attr(kMaxSharedMemoryPerBlock);
    info.shared_bytes_per_block_optin = attr(kMaxSharedMemoryPerBlockOptin);
    size_t total = 0;
    check(api.cuDeviceTotalMem_v2(&total, device), "cuDeviceTotalMem");
    info.total_memory_bytes = static_cast<int64_t>(total);
    info.l2_bytes = attr(kL2CacheSize);
    return info;
}

}  // namespace

bool cuda_available() {
    return driver_or_null() != nullptr;
}

std::string cuda_unavailable_reason() {
    return cuda_available() ? std::string() : unavailable_reason();
}

int cuda_device_count() {
    return internal::cuda::device_count();
}

std::string CudaDeviceInfo::arch() const {
    return "sm_" + std::to_string(compute_major) + std::to_string(compute_minor);
}

CudaDeviceInfo cuda_device_info(int id) {
    static std::mutex mutex;
    static std::map<int, CudaDeviceInfo> cache;
    {
        std::lock_guard<std::mutex> lock(mutex);
        auto it = cache.find(id);
        if (it != cache.end()) return it->second;
    }
    CudaDeviceInfo info = query_device_info(id);  // throws for an unavailable driver or bad id
    std::lock_guard<std::mutex> lock(mutex);
    return cache.emplace(id, std::move(info)).first->second;
}

void cuda_synchronize(int id) {
    ContextGuard guard(id);
    check(driver().cuCtxSynchronize(), "cuCtxSynchronize(device " + std::to_string(id) + ")");
}

}  // namespace tessel
