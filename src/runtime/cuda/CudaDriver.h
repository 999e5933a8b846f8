// The CUDA driver API, opened with dlopen("libcuda.so.1") on first use (include/tessel/runtime/
// CUDA.h says why). The runtime builds without the CUDA toolkit, so this header declares the few
// types and enum values it uses itself; the numeric values are those of the toolkit's
// /usr/local/cuda/include/cuda.h (CUDA 13.0), which the driver ABI keeps stable.
//
// Every call goes through check(), which turns a CUresult into a RuntimeError naming the call and
// the decoded error ("cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE: device kernel image is
// invalid"). Work happens in each device's primary context (ContextGuard).
#pragma once

#include <cstdint>
#include <string>

namespace tessel::internal::cuda {

// ---- The driver's types (opaque handles; CUresult as int) ----
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // 64-bit on every supported platform
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUevent = CUevent_st*;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;

// ---- Values from cuda.h ----
inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;

/// CUdevice_attribute values used by the runtime.
enum DeviceAttribute : int {
    kMaxThreadsPerBlock = 1,             // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK
    kMaxBlockDimX = 2,                   // ..._MAX_BLOCK_DIM_X (Y = 3, Z = 4)
    kMaxGridDimX = 5,                    // ..._MAX_GRID_DIM_X (Y = 6, Z = 7)
    kMaxSharedMemoryPerBlock = 8,        // ..._MAX_SHARED_MEMORY_PER_BLOCK
    kWarpSize = 10,                      // ..._WARP_SIZE
    kMaxRegistersPerBlock = 12,          // ..._MAX_REGISTERS_PER_BLOCK
    kMultiprocessorCount = 16,           // ..._MULTIPROCESSOR_COUNT
    kL2CacheSize = 38,                   // ..._L2_CACHE_SIZE
    kComputeCapabilityMajor = 75,        // ..._COMPUTE_CAPABILITY_MAJOR
    kComputeCapabilityMinor = 76,        // ..._COMPUTE_CAPABILITY_MINOR
    kMaxSharedMemoryPerBlockOptin = 97,  // ..._MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    kMemoryPoolsSupported = 115,         // ..._MEMORY_POOLS_SUPPORTED
};

/// CUfunction_attribute values used by the runtime.
enum FunctionAttribute : int {
    kFuncMaxThreadsPerBlock = 0,     // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
    kFuncSharedSizeBytes = 1,        // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES (static shared)
    kFuncLocalSizeBytes = 3,         // CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
    kFuncNumRegs = 4,                // CU_FUNC_ATTRIBUTE_NUM_REGS
    kFuncMaxDynamicSharedBytes = 8,  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
};

/// CUtensorMapDataType values: the element types of a TMA tensor map (runtime/cuda/TensorMaps.h).
enum TensorMapDataType : int {
    kTensorMapUInt8 = 0,     // CU_TENSOR_MAP_DATA_TYPE_UINT8
    kTensorMapUInt16 = 1,    // CU_TENSOR_MAP_DATA_TYPE_UINT16
    kTensorMapUInt32 = 2,    // CU_TENSOR_MAP_DATA_TYPE_UINT32
    kTensorMapInt32 = 3,     // CU_TENSOR_MAP_DATA_TYPE_INT32
    kTensorMapUInt64 = 4,    // CU_TENSOR_MAP_DATA_TYPE_UINT64
    kTensorMapInt64 = 5,     // CU_TENSOR_MAP_DATA_TYPE_INT64
    kTensorMapFloat16 = 6,   // CU_TENSOR_MAP_DATA_TYPE_FLOAT16
    kTensorMapFloat32 = 7,   // CU_TENSOR_MAP_DATA_TYPE_FLOAT32
    kTensorMapFloat64 = 8,   // CU_TENSOR_MAP_DATA_TYPE_FLOAT64
    kTensorMapBFloat16 = 9,  // CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
};

/// CUtensorMapSwizzle values: the shared-memory layout a bulk tensor copy writes.
enum TensorMapSwizzle : int {
    kTensorMapSwizzleNone = 0,  // CU_TENSOR_MAP_SWIZZLE_NONE
    kTensorMapSwizzle32B = 1,   // CU_TENSOR_MAP_SWIZZLE_32B
    kTensorMapSwizzle64B = 2,   // CU_TENSOR_MAP_SWIZZLE_64B
    kTensorMapSwizzle128B = 3,  // CU_TENSOR_MAP_SWIZZLE_128B
};

/// The other cuTensorMapEncodeTiled arguments the runtime passes.
inline constexpr int kTensorMapInterleaveNone = 0;   // CU_TENSOR_MAP_INTERLEAVE_NONE
inline constexpr int kTensorMapL2Promotion128B = 2;  // CU_TENSOR_MAP_L2_PROMOTION_L2_128B
/// Out-of-bounds elements of a box read as zero (the compiler's edge tiles rely on it).
inline constexpr int kTensorMapFloatOobFillNone = 0;  // CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE

/// CUlaunchAttribute and CUlaunchConfig (cuLaunchKernelEx's arguments, CUDA 12.0+): only the
/// attribute tessel sets, a programmatic dependent launch (CudaLaunch::dependent).
inline constexpr int kLaunchAttributeProgrammaticStreamSerialization = 6;
struct LaunchAttribute {
    int id;  // CUlaunchAttributeID
    char pad[4];
    union {
        char bytes[64];
        int programmatic_stream_serialization_allowed;
    } value;
};
static_assert(sizeof(LaunchAttribute) == 72, "CUlaunchAttribute is 72 bytes");
struct LaunchConfig {
    unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
    CUstream stream;
    LaunchAttribute* attributes;
    unsigned num_attributes;
};

/// The driver entry points, resolved with dlsym (the _v2 symbols where cuda.h maps to them; the
/// legacy-default-stream variants, not the _ptds/_ptsz ones). Optional ones may be null.
struct DriverApi {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDriverGetVersion)(int*);
    CUresult (*cuGetErrorName)(CUresult, const char**);
    CUresult (*cuGetErrorString)(CUresult, const char**);
    CUresult (*cuDeviceGetCount)(int*);
    CUresult (*cuDeviceGet)(CUdevice*, int);
    CUresult (*cuDeviceGetName)(char*, int, CUdevice);
    CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
    CUresult (*cuDeviceTotalMem_v2)(size_t*, CUdevice);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
    CUresult (*cuCtxGetCurrent)(CUcontext*);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuCtxSynchronize)();
    CUresult (*cuMemAlloc_v2)(CUdeviceptr*, size_t);
    CUresult (*cuMemFree_v2)(CUdeviceptr);
    CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void*, size_t);
    CUresult (*cuMemcpyDtoH_v2)(void*, CUdeviceptr, size_t);
    CUresult (*cuMemcpyDtoD_v2)(CUdeviceptr, CUdeviceptr, size_t);
    CUresult (*cuMemcpyPeer)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t);
    CUresult (*cuMemsetD8_v2)(CUdeviceptr, unsigned char, size_t);
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuModuleLoadData)(CUmodule*, const void*);
    CUresult (*cuModuleUnload)(CUmodule);
    CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
    CUresult (*cuFuncGetAttribute)(int*, int, CUfunction);
    CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, CUstream, void**, void**);
    // Optional (CUDA 12.0+): launches with attributes (programmatic dependent launches).
    CUresult (*cuLaunchKernelEx)(const LaunchConfig*, CUfunction, void**, void**);
    // Optional (CUDA 11.2+): stream-ordered allocation of launch workspaces.
    CUresult (*cuMemAllocAsync)(CUdeviceptr*, size_t, CUstream);
    CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
    // Optional: the measurement worker's stream, events and L2 flush (runtime/cuda/CudaTimer.h).
    CUresult (*cuStreamCreate)(CUstream*, unsigned);
    CUresult (*cuStreamDestroy_v2)(CUstream);
    CUresult (*cuEventCreate)(CUevent*, unsigned);
    CUresult (*cuEventDestroy_v2)(CUevent);
    CUresult (*cuEventRecord)(CUevent, CUstream);
    CUresult (*cuEventSynchronize)(CUevent);
    CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
    CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
    // Optional (CUDA 12.0+): TMA tensor maps (runtime/cuda/TensorMaps.h). The map is a CUtensorMap
    // (128 bytes, 64-byte aligned); the ints are TensorMapDataType, CUtensorMapInterleave,
    // TensorMapSwizzle, CUtensorMapL2promotion and CUtensorMapFloatOOBfill values.
    CUresult (*cuTensorMapEncodeTiled)(void* tensorMap, int dataType, unsigned rank,
                                       void* globalAddress, const unsigned long long* globalDim,
                                       const unsigned long long* globalStrides,
                                       const unsigned* boxDim, const unsigned* elementStrides,
                                       int interleave, int swizzle, int l2Promotion, int oobFill);
};

/// The driver, loaded and initialised (cuInit) once; null when unavailable (see
/// unavailable_reason()). Never throws.
const DriverApi* driver_or_null();
/// Why driver_or_null() is null, or there is no device; empty when a device is usable.
const std::string& unavailable_reason();
/// The driver when at least one device is usable; otherwise RuntimeError with the reason.
const DriverApi& driver();

/// "CUDA_ERROR_OUT_OF_MEMORY: out of memory" for `result`.
std::string error_text(CUresult result);
/// Throws RuntimeError("<what> failed: <error_text>") unless `result` is CUDA_SUCCESS.
void check(CUresult result, const std::string& what);

/// The number of devices (0 when unavailable). Never throws.
int device_count();
/// Device `id`'s primary context, retained once for the life of the process; RuntimeError when
/// CUDA is unavailable or there is no such device.
CUcontext primary_context(int id);

/// Makes device `id`'s primary context current on the calling thread for the guard's lifetime,
/// and restores the thread's previous context afterwards.
class ContextGuard {
public:
    explicit ContextGuard(int id);
    ~ContextGuard();
    ContextGuard(const ContextGuard&) = delete;
    ContextGuard& operator=(const ContextGuard&) = delete;

private:
    CUcontext previous_ = nullptr;
    bool switched_ = false;
};

/// A device attribute (DeviceAttribute) of device `id`; checked.
int device_attribute(int id, DeviceAttribute attribute);

}  // namespace tessel::internal::cuda
