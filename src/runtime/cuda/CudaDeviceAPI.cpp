// CUDA memory: cuMemAlloc in the device's primary context, synchronous copies on the legacy
// default stream (so they are ordered after kernels launched there, and, for copies to the host,
// complete when the call returns).
#include "runtime/cuda/CudaDeviceAPI.h"

#include "runtime/cuda/CudaDriver.h"
#include "tessel/Error.h"

namespace tessel::internal {

namespace {

using namespace cuda;

CUdeviceptr device_ptr(const void* p) {
    return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
}

std::string on(Device device) {
    return " on " + device.str();
}

class CudaDeviceAPI final : public DeviceAPI {
public:
    void* allocate(Device device, size_t bytes, size_t alignment) override {
        // cuMemAlloc's memory is aligned to at least 256 bytes.
        if (alignment > 256) {
            TESSEL_THROW(RuntimeError) << "CUDA allocation: alignment " << alignment
                                       << " is over the 256 bytes the driver guarantees";
        }
        ContextGuard guard(device.id);
        CUdeviceptr ptr = 0;
        CUresult r = driver().cuMemAlloc_v2(&ptr, bytes ? bytes : 1);  // never null, also for 0
        if (r != CUDA_SUCCESS) {
            TESSEL_THROW(RuntimeError) << "cuMemAlloc of " << bytes << " bytes" << on(device)
                                       << " failed: " << error_text(r);
        }
        return reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
    }

    void free(Device device, void* ptr) override {
        // Called from destructors: never throws. A failure (the driver shutting down at process
        // exit, a sticky error from an earlier kernel) leaves nothing better to do than go on.
        const DriverApi* api = driver_or_null();
        if (!api || !ptr) return;
        try {
            ContextGuard guard(device.id);
            api->cuMemFree_v2(device_ptr(ptr));
        } catch (const std::exception&) {
        }
    }

    void copy_to_device(Device device, void* dst, const void* src, size_t bytes) override {
        ContextGuard guard(device.id);
        if (bytes) check(driver().cuMemcpyHtoD_v2(device_ptr(dst), src, bytes),
                         "cuMemcpyHtoD" + on(device));
    }

    void copy_to_host(Device device, void* dst, const void* src, size_t bytes) override {
        ContextGuard guard(device.id);
        if (bytes) check(driver().cuMemcpyDtoH_v2(dst, device_ptr(src), bytes),
                         "cuMemcpyDtoH" + on(device));
    }

    void copy_between(Device dst_device, void* dst, Device src_device, const void* src,
                      size_t bytes) override {
        ContextGuard guard(dst_device.id);
        if (!bytes) return;
        if (dst_device == src_device) {
            check(driver().cuMemcpyDtoD_v2(device_ptr(dst), device_ptr(src), bytes),
                  "cuMemcpyDtoD" + on(dst_device));
            return;
        }
        check(driver().cuMemcpyPeer(device_ptr(dst), primary_context(dst_device.id),
                                    device_ptr(src), primary_context(src_device.id), bytes),
              "cuMemcpyPeer from " + src_device.str() + " to " + dst_device.str());
    }

    void synchronize(Device device, void* stream) override {
        ContextGuard guard(device.id);
        if (stream) {
            check(driver().cuStreamSynchronize(static_cast<CUstream>(stream)),
                  "cuStreamSynchronize" + on(device));
        } else {
            check(driver().cuCtxSynchronize(), "cuCtxSynchronize" + on(device));
        }
    }
};

}  // namespace

std::shared_ptr<DeviceAPI> cuda_device_api() {
    static std::shared_ptr<DeviceAPI> api = std::make_shared<CudaDeviceAPI>();
    return api;
}

}  // namespace tessel::internal
