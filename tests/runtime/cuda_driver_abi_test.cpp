// The CUDA driver's types and values that runtime/cuda/CudaDriver.h declares itself (the runtime
// builds without the toolkit) against the toolkit's cuda.h, where the build has it (CI does):
// the enum values, and the layout of the structs passed to the driver (cuLaunchKernelEx's).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

#include "runtime/cuda/CudaDriver.h"

#ifdef TESSEL_TEST_CUDA_H
#include <cuda.h>

namespace tessel::internal::cuda {
namespace {

constexpr bool same(int ours, int toolkit) {
    return ours == toolkit;
}

static_assert(same(CUDA_ERROR_NOT_FOUND, ::CUDA_ERROR_NOT_FOUND));
static_assert(same(kMaxThreadsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
static_assert(same(kMaxBlockDimX, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X));
static_assert(same(kMaxGridDimX, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X));
static_assert(same(kMaxSharedMemoryPerBlock, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
static_assert(same(kWarpSize, CU_DEVICE_ATTRIBUTE_WARP_SIZE));
static_assert(same(kMaxRegistersPerBlock, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK));
static_assert(same(kMultiprocessorCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
static_assert(same(kL2CacheSize, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
static_assert(same(kComputeCapabilityMajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR));
static_assert(same(kComputeCapabilityMinor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
static_assert(same(kMaxSharedMemoryPerBlockOptin,
                   CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
static_assert(same(kMemoryPoolsSupported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED));
static_assert(same(kFuncMaxThreadsPerBlock, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
static_assert(same(kFuncSharedSizeBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES));
static_assert(same(kFuncLocalSizeBytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES));
static_assert(same(kFuncNumRegs, CU_FUNC_ATTRIBUTE_NUM_REGS));
static_assert(same(kFuncMaxDynamicSharedBytes, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES));
static_assert(same(kTensorMapUInt8, CU_TENSOR_MAP_DATA_TYPE_UINT8));
static_assert(same(kTensorMapFloat16, CU_TENSOR_MAP_DATA_TYPE_FLOAT16));
static_assert(same(kTensorMapFloat32, CU_TENSOR_MAP_DATA_TYPE_FLOAT32));
static_assert(same(kTensorMapBFloat16, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16));
static_assert(same(kTensorMapSwizzle128B, CU_TENSOR_MAP_SWIZZLE_128B));
static_assert(same(kTensorMapInterleaveNone, CU_TENSOR_MAP_INTERLEAVE_NONE));
static_assert(same(kTensorMapL2Promotion128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B));
static_assert(same(kTensorMapFloatOobFillNone, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));

static_assert(same(kLaunchAttributeProgrammaticStreamSerialization,
                   CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION));
static_assert(sizeof(LaunchAttribute) == sizeof(CUlaunchAttribute));
static_assert(offsetof(LaunchAttribute, value) == offsetof(CUlaunchAttribute, value));
static_assert(sizeof(LaunchConfig) == sizeof(CUlaunchConfig));
static_assert(offsetof(LaunchConfig, shared_bytes) == offsetof(CUlaunchConfig, sharedMemBytes));
static_assert(offsetof(LaunchConfig, stream) == offsetof(CUlaunchConfig, hStream));
static_assert(offsetof(LaunchConfig, attributes) == offsetof(CUlaunchConfig, attrs));
static_assert(offsetof(LaunchConfig, num_attributes) == offsetof(CUlaunchConfig, numAttrs));

}  // namespace
}  // namespace tessel::internal::cuda
#endif

TEST(CudaDriverAbi, MatchesTheToolkitHeader) {
#ifndef TESSEL_TEST_CUDA_H
    GTEST_SKIP() << "built without the CUDA toolkit's cuda.h: nothing to compare with";
#else
    // The comparisons are the static_asserts above; this checks a value the driver reads.
    tessel::internal::cuda::LaunchAttribute a{};
    a.value.programmatic_stream_serialization_allowed = 1;
    CUlaunchAttribute b{};
    b.value.programmaticStreamSerializationAllowed = 1;
    EXPECT_EQ(0, std::memcmp(&a.value, &b.value, sizeof(b.value)));
#endif
}
