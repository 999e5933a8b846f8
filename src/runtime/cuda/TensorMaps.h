// TMA tensor maps at run time (CudaTensorMap in runtime/CudaLaunchPlan.h): the element types TMA
// copies, the checks a map must pass before the driver encodes it, and the launcher's cache of
// encoded maps. The checks are pure functions, so they are tested without a GPU.
//
// A device function declares a tensor map parameter as
//     const __grid_constant__ tsl_tensor_map name
// with `struct __align__(64) tsl_tensor_map { unsigned long long v[16]; };`: the 128 bytes of a
// CUtensorMap, which cuLaunchKernel copies from the EncodedTensorMap its params entry points at.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "tessel/runtime/CudaLaunchPlan.h"

namespace tessel::internal::cuda {

/// A CUtensorMap as cuTensorMapEncodeTiled writes it (128 bytes; the driver asks for 64-byte
/// alignment).
struct alignas(64) EncodedTensorMap {
    uint64_t words[16] = {};
};
static_assert(sizeof(EncodedTensorMap) == 128 && alignof(EncodedTensorMap) == 64,
              "EncodedTensorMap must have CUtensorMap's size and the driver's alignment");

/// TMA's limits (cuTensorMapEncodeTiled's documentation, CUDA 13.0).
inline constexpr int kTensorMapMaxRank = 5;
inline constexpr int64_t kTensorMapMaxBox = 256;    ///< elements per box dimension
inline constexpr int64_t kTensorMapAlignment = 16;  ///< address, strides, inner box bytes
inline constexpr int64_t kTensorMapMaxDim = int64_t(1) << 32;       ///< elements per dimension
inline constexpr int64_t kTensorMapStrideLimit = int64_t(1) << 40;  ///< byte strides stay below

/// The CUtensorMapDataType (TensorMapDataType) of a plan's element type name: float16, bfloat16,
/// float32, float64, int8/uint8 (UINT8), int16/uint16 (UINT16), int32, uint32, int64, uint64.
/// RuntimeError on any other name.
int tensor_map_data_type(const std::string& dtype);
/// Bytes of one element of `dtype`; RuntimeError as tensor_map_data_type().
int64_t tensor_map_element_bytes(const std::string& dtype);
/// The CUtensorMapSwizzle (TensorMapSwizzle) of a swizzle width of 0, 32, 64 or 128 bytes;
/// RuntimeError on any other width.
int tensor_map_swizzle(int swizzle_bytes);

/// What makes `map` malformed as plan data, "" when nothing: an unknown dtype, a rank outside
/// 1..5, strides or box entries not matching the rank, a box entry outside 1..256, a swizzle
/// width other than 0, 32, 64 or 128. decode_cuda_payload() refuses such a map.
std::string tensor_map_layout_problem(const CudaTensorMap& map);

/// What keeps TMA from reading `map` at `address` with the evaluated `dims` (elements, innermost
/// first) and byte `strides` (of dims 1..), "" when nothing: the layout problems above, then
/// dims and strides not matching the rank, the address not a multiple of 16, a byte stride not a
/// multiple of 16 or not below 2^40, a dim outside 1..2^32, the inner box bytes (box[0] times
/// the element size) not a multiple of 16 or wider than the swizzle. The text says what to do
/// about it; the caller names the kernel and the argument.
std::string tensor_map_problem(const CudaTensorMap& map, uintptr_t address,
                               const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& strides);

/// "float16, dims 1001 x 1000, innermost first": a map's element type and evaluated dims.
std::string tensor_map_text(const CudaTensorMap& map, const std::vector<int64_t>& dims);

/// What a tensor map is encoded from, besides the plan: one call's address, dims and strides.
struct TensorMapValues {
    uintptr_t address = 0;
    std::vector<int64_t> dims;     ///< elements, innermost first
    std::vector<int64_t> strides;  ///< bytes, of dims 1..
    bool operator==(const TensorMapValues& o) const = default;
};

/// Why this process cannot encode tensor maps (the driver has no cuTensorMapEncodeTiled: older
/// than CUDA 12.0), "" when it can. Expects a usable driver (driver()).
std::string tensor_map_driver_problem();

/// Encodes `map` with `values` through the driver's cuTensorMapEncodeTiled (element strides 1,
/// no interleave, L2 promotion 128B, out-of-bounds elements read as zero). Expects
/// tensor_map_problem() to have passed; RuntimeError naming `what` when the driver has no
/// cuTensorMapEncodeTiled or refuses the map.
EncodedTensorMap encode_tensor_map(const CudaTensorMap& map, const TensorMapValues& values,
                                   const std::string& what);

/// A launcher's encoded tensor maps: one slot per (launch, map) of its plan, encoded again only
/// when the values it was encoded from change. Thread-safe: calls from several threads share it.
class TensorMapCache {
public:
    using Encoder = std::function<EncodedTensorMap()>;

    /// The map of slot (launch, map) for `values`: the cached copy when the slot was last encoded
    /// from the same values, else `encode()`'s result, kept for the next call.
    EncodedTensorMap get(size_t launch, size_t map, const TensorMapValues& values,
                         const Encoder& encode);

private:
    struct Slot {
        bool encoded = false;
        TensorMapValues values;
        EncodedTensorMap map;
    };
    std::mutex mutex_;
    std::vector<std::vector<Slot>> slots_;  ///< [launch][map], grown on demand
};

}  // namespace tessel::internal::cuda
