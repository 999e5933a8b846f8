// Loading the CUDA driver with dlopen, error decoding, primary contexts.
#include "runtime/cuda/CudaDriver.h"

#include <dlfcn.h>
#include <cstdlib>

#include <mutex>
#include <vector>

#include "tessel/Error.h"

namespace tessel::internal::cuda {

namespace {

struct DriverState {
    DriverApi api{};
    bool loaded = false;  // every required symbol resolved and cuInit succeeded
    int device_count = 0;
    std::string reason;  // why no device is usable; empty when one is
};

// Resolves `name` into `slot`; false (and the reason) when a required symbol is missing.
template <typename F>
bool resolve(void* lib, const char* name, F& slot, bool required, std::string& reason) {
    slot = reinterpret_cast<F>(dlsym(lib, name));
    if (slot || !required) return true;
    reason = std::string("libcuda.so.1 has no symbol ") + name +
             " (the NVIDIA driver is too old for tessel)";
    return false;
}

bool resolve_all(void* lib, DriverApi& a, std::string& reason) {
#define TESSEL_CU_REQUIRED(name) \
    if (!resolve(lib, #name, a.name, true, reason)) return false;
    TESSEL_CU_REQUIRED(cuInit)
    TESSEL_CU_REQUIRED(cuDriverGetVersion)
    TESSEL_CU_REQUIRED(cuGetErrorName)
    TESSEL_CU_REQUIRED(cuGetErrorString)
    TESSEL_CU_REQUIRED(cuDeviceGetCount)
    TESSEL_CU_REQUIRED(cuDeviceGet)
    TESSEL_CU_REQUIRED(cuDeviceGetName)
    TESSEL_CU_REQUIRED(cuDeviceGetAttribute)
    TESSEL_CU_REQUIRED(cuDeviceTotalMem_v2)
    TESSEL_CU_REQUIRED(cuDevicePrimaryCtxRetain)
    TESSEL_CU_REQUIRED(cuCtxGetCurrent)
    TESSEL_CU_REQUIRED(cuCtxSetCurrent)
    TESSEL_CU_REQUIRED(cuCtxSynchronize)
    TESSEL_CU_REQUIRED(cuMemAlloc_v2)
    TESSEL_CU_REQUIRED(cuMemFree_v2)
    TESSEL_CU_REQUIRED(cuMemcpyHtoD_v2)
    TESSEL_CU_REQUIRED(cuMemcpyDtoH_v2)
    TESSEL_CU_REQUIRED(cuMemcpyDtoD_v2)
    TESSEL_CU_REQUIRED(cuMemcpyPeer)
    TESSEL_CU_REQUIRED(cuMemsetD8_v2)
    TESSEL_CU_REQUIRED(cuStreamSynchronize)
    TESSEL_CU_REQUIRED(cuModuleLoadData)
    TESSEL_CU_REQUIRED(cuModuleUnload)
    TESSEL_CU_REQUIRED(cuModuleGetFunction)
    TESSEL_CU_REQUIRED(cuFuncGetAttribute)
    TESSEL_CU_REQUIRED(cuFuncSetAttribute)
    TESSEL_CU_REQUIRED(cuLaunchKernel)
#undef TESSEL_CU_REQUIRED
    resolve(lib, "cuMemAllocAsync", a.cuMemAllocAsync, false, reason);
    resolve(lib, "cuMemFreeAsync", a.cuMemFreeAsync, false, reason);
    if (!a.cuMemAllocAsync || !a.cuMemFreeAsync) a.cuMemAllocAsync = nullptr;
    resolve(lib, "cuStreamCreate", a.cuStreamCreate, false, reason);
    resolve(lib, "cuStreamDestroy_v2", a.cuStreamDestroy_v2, false, reason);
    resolve(lib, "cuEventCreate", a.cuEventCreate, false, reason);
    resolve(lib, "cuEventDestroy_v2", a.cuEventDestroy_v2, false, reason);
    resolve(lib, "cuEventRecord", a.cuEventRecord, false, reason);
    resolve(lib, "cuEventSynchronize", a.cuEventSynchronize, false, reason);
    resolve(lib, "cuEventElapsedTime", a.cuEventElapsedTime, false, reason);
    resolve(lib, "cuMemsetD8Async", a.cuMemsetD8Async, false, reason);
    resolve(lib, "cuTensorMapEncodeTiled", a.cuTensorMapEncodeTiled, false, reason);
    resolve(lib, "cuLaunchKernelEx", a.cuLaunchKernelEx, false, reason);
    return true;
}

// error_text() for a driver that may not be in state() yet (during load_driver()).
std::string decode(const DriverApi& api, CUresult result) {
    const char* name = nullptr;
    const char* text = nullptr;
    if (api.cuGetErrorName && api.cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
    if (api.cuGetErrorString && api.cuGetErrorString(result, &text) != CUDA_SUCCESS) text = nullptr;
    std::string out = name ? name : "CUDA error " + std::to_string(result);
    if (text) out += std::string(": ") + text;
    return out;
}

DriverState load_driver() {
    DriverState s;
    // The driver reads CUDA_CACHE_DISABLE when it initialises, and NVRTC (12.9+) compiles through
    // its compute cache: a program served from the cache has no ptxas report, so tessel's
    // registers and spills would be unknown (codegen/cuda/NVRTC.cpp, docs/cuda.md). Off for the
    // process unless the user chose; tessel keeps its own in-process cache of compiled programs.
    setenv("CUDA_CACHE_DISABLE", "1", /*overwrite=*/0);
    // Never dlclose'd: kernels and contexts live until the process ends.
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* why = dlerror();
        s.reason = std::string("libcuda.so.1 (the NVIDIA driver) could not be loaded: ") +
                   (why ? why : "unknown error");
        return s;
    }
    if (!resolve_all(lib, s.api, s.reason)) return s;
    s.loaded = true;
    CUresult r = s.api.cuInit(0);
    if (r != CUDA_SUCCESS) {
        s.reason = "cuInit failed: " + decode(s.api, r);
        return s;
    }
    r = s.api.cuDeviceGetCount(&s.device_count);
    if (r != CUDA_SUCCESS) {
        s.device_count = 0;
        s.reason = "cuDeviceGetCount failed: " + decode(s.api, r);
    } else if (s.device_count == 0) {
        s.reason = "the CUDA driver reports no device";
    }
    return s;
}

// Never destroyed: modules and arrays freed by static destructors at exit still ask for it.
DriverState& state() {
    static DriverState* s = new DriverState(load_driver());
    return *s;
}

}  // namespace

const DriverApi* driver_or_null() {
    const DriverState& s = state();
    return s.loaded && s.device_count > 0 ? &s.api : nullptr;
}

const std::string& unavailable_reason() {
    return state().reason;
}

const DriverApi& driver() {
    const DriverApi* api = driver_or_null();
    if (!api) TESSEL_THROW(RuntimeError) << "CUDA is not available: " << unavailable_reason();
    return *api;
}

std::string error_text(CUresult result) {
    return decode(state().api, result);
}

void check(CUresult result, const std::string& what) {
    if (result != CUDA_SUCCESS)
        TESSEL_THROW(RuntimeError) << what << " failed: " << error_text(result);
}

int device_count() {
    return driver_or_null() ? state().device_count : 0;
}

CUcontext primary_context(int id) {
    const DriverApi& api = driver();
    int count = state().device_count;
    if (id < 0 || id >= count) {
        TESSEL_THROW(RuntimeError) << "no CUDA device " << id << " (this machine has " << count
                                   << (count == 1 ? " device)" : " devices)");
    }
    static std::mutex mutex;
    static std::vector<CUcontext> contexts(static_cast<size_t>(count), nullptr);
    std::lock_guard<std::mutex> lock(mutex);
    CUcontext& ctx = contexts[static_cast<size_t>(id)];
    if (!ctx) {
        CUdevice device = 0;
        check(api.cuDeviceGet(&device, id), "cuDeviceGet(" + std::to_string(id) + ")");
        check(api.cuDevicePrimaryCtxRetain(&ctx, device),
              "cuDevicePrimaryCtxRetain(device " + std::to_string(id) + ")");
    }
    return ctx;
}

ContextGuard::ContextGuard(int id) {
    CUcontext ctx = primary_context(id);
    const DriverApi& api = driver();
    check(api.cuCtxGetCurrent(&previous_), "cuCtxGetCurrent");
    if (previous_ == ctx) return;
    check(api.cuCtxSetCurrent(ctx), "cuCtxSetCurrent(device " + std::to_string(id) + ")");
    switched_ = true;
}

ContextGuard::~ContextGuard() {
    if (switched_) driver().cuCtxSetCurrent(previous_);  // nothing to do about a failure here
}

int device_attribute(int id, DeviceAttribute attribute) {
    const DriverApi& api = driver();
    primary_context(id);  // checks the id
    CUdevice device = 0;
    check(api.cuDeviceGet(&device, id), "cuDeviceGet(" + std::to_string(id) + ")");
    int value = 0;
    check(api.cuDeviceGetAttribute(&value, attribute, device),
          "cuDeviceGetAttribute(" + std::to_string(static_cast<int>(attribute)) + ")");
    return value;
}

}  // namespace tessel::internal::cuda
