// The DLPack exchange structs (DLPack ABI version 1, as in dlpack.h v0.8), written from the
// specification at https://dmlc.github.io/dlpack/latest/c_api.html.
//
// They are declared inside namespace tessel::dlpack, not at global scope, so that a translation
// unit which also includes the reference dlpack.h (numpy, PyTorch bindings) sees no redefinition.
// Only the memory layout matters across libraries, and it is the specification's: plain C structs
// of the same members in the same order, so a pointer to one may be passed where the other is
// expected.
#pragma once

#include <cstdint>

namespace tessel::dlpack {

/// DLPack's version (major * 100 + minor) and ABI version these structs follow.
inline constexpr int kDLPackVersion = 80;
inline constexpr int kDLPackAbiVersion = 1;

/// Where a tensor's memory lives (DLDeviceType). tessel uses kDLCPU and kDLCUDA.
enum DLDeviceType : int32_t {
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3,
    kDLOpenCL = 4,
    kDLVulkan = 7,
    kDLMetal = 8,
    kDLVPI = 9,
    kDLROCM = 10,
    kDLROCMHost = 11,
    kDLExtDev = 12,
    kDLCUDAManaged = 13,
    kDLOneAPI = 14,
    kDLWebGPU = 15,
    kDLHexagon = 16,
};

/// A device: its type and index among the devices of that type.
struct DLDevice {
    DLDeviceType device_type;
    int32_t device_id;
};

/// The kind of an element type (DLDataTypeCode).
enum DLDataTypeCode : uint8_t {
    kDLInt = 0,
    kDLUInt = 1,
    kDLFloat = 2,
    kDLOpaqueHandle = 3,
    kDLBfloat = 4,
    kDLComplex = 5,
    kDLBool = 6,
};

/// An element type: code (a DLDataTypeCode), bits per lane, number of lanes.
struct DLDataType {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
};

/// A view of a strided tensor. `shape` and `strides` hold `ndim` values; strides count elements
/// and a null `strides` means compact row-major. The first element is at `data + byte_offset`.
struct DLTensor {
    void* data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t* shape;
    int64_t* strides;
    uint64_t byte_offset;
};

/// A DLTensor plus its owner: the consumer calls `deleter(self)` exactly once when it no longer
/// needs the tensor (a null deleter means nothing to release).
struct DLManagedTensor {
    DLTensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(DLManagedTensor* self);
};

}  // namespace tessel::dlpack
