// TMA tensor maps: element types, checks, encoding and the launcher's cache.
#include "runtime/cuda/TensorMaps.h"

#include <sstream>

#include "runtime/cuda/CudaDriver.h"
#include "tessel/Error.h"

namespace tessel::internal::cuda {

namespace {

struct ElementType {
    const char* name;
    TensorMapDataType type;
    int64_t bytes;
};

// TMA copies bits: a signed integer type travels as the unsigned type of its width where
// CUtensorMapDataType has no signed one (it only matters to the out-of-bounds fill, zero either
// way).
constexpr ElementType kElementTypes[] = {
    {"float16", kTensorMapFloat16, 2}, {"bfloat16", kTensorMapBFloat16, 2},
    {"float32", kTensorMapFloat32, 4}, {"float64", kTensorMapFloat64, 8},
    {"int8", kTensorMapUInt8, 1},      {"uint8", kTensorMapUInt8, 1},
    {"int16", kTensorMapUInt16, 2},    {"uint16", kTensorMapUInt16, 2},
    {"int32", kTensorMapInt32, 4},     {"uint32", kTensorMapUInt32, 4},
    {"int64", kTensorMapInt64, 8},     {"uint64", kTensorMapUInt64, 8},
};

const ElementType* find_element_type(const std::string& dtype) {
    for (const ElementType& t : kElementTypes) {
        if (dtype == t.name) return &t;
    }
    return nullptr;
}

std::string element_type_names() {
    std::string names;
    for (const ElementType& t : kElementTypes)
        names += (names.empty() ? "" : ", ") + std::string(t.name);
    return names;
}

const ElementType& element_type(const std::string& dtype) {
    const ElementType* t = find_element_type(dtype);
    if (!t) {
        TESSEL_THROW(RuntimeError) << "tensor map: element type '" << dtype
                                   << "' is not one TMA copies (" << element_type_names() << ")";
    }
    return *t;
}

template <typename... Parts>
std::string text(const Parts&... parts) {
    std::ostringstream out;
    (out << ... << parts);
    return out.str();
}

// The problems of the evaluated values, the layout being sound.
std::string value_problem(const CudaTensorMap& map, uintptr_t address,
                          const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
    if (dims.size() != map.dims.size() || strides.size() != map.strides.size())
        return text(dims.size(), " dims and ", strides.size(), " strides for rank ",
                    map.dims.size(), " (malformed launch plan)");
    if (address % kTensorMapAlignment != 0)
        return text("address 0x", std::hex, address, std::dec,
                    " is not a multiple of 16 (TMA reads tensors that start on a 16-byte "
                    "boundary; pass an array that does, or schedule this kernel without tma())");
    for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] < 1 || dims[i] > kTensorMapMaxDim)
            return text("extent ", dims[i], " of dim ", i,
                        " is outside 1..2^32 (TMA's limit; schedule this shape without tma())");
    }
    for (size_t i = 0; i < strides.size(); ++i) {
        if (strides[i] % kTensorMapAlignment != 0)
            return text("byte stride ", strides[i], " of dim ", i + 1,
                        " is not a multiple of 16 (TMA reads rows whose stride is a multiple of "
                        "16 bytes; schedule this shape without tma())");
        if (strides[i] < 0 || strides[i] >= kTensorMapStrideLimit)
            return text("byte stride ", strides[i], " of dim ", i + 1,
                        " is outside 0..2^40 - 1 (TMA's limit; schedule this shape without tma())");
    }
    return "";
}

// The box's inner row against TMA's 16-byte granule and the swizzle's width.
std::string box_problem(const CudaTensorMap& map) {
    int64_t element = tensor_map_element_bytes(map.dtype);
    int64_t row = map.box[0] * element;
    if (row % kTensorMapAlignment != 0)
        return text("the box's inner row of ", map.box[0], " x ", element, " = ", row,
                    " bytes is not a multiple of 16 (TMA moves rows of whole 16-byte units: make "
                    "the tile's inner extent a multiple of ",
                    kTensorMapAlignment / element, " ", map.dtype, " elements)");
    if (map.swizzle_bytes > 0 && row > map.swizzle_bytes)
        return text("the box's inner row of ", map.box[0], " x ", element, " = ", row,
                    " bytes is wider than the ", map.swizzle_bytes,
                    "-byte swizzle (a swizzled box's rows are at most the swizzle's width: make "
                    "the tile's inner extent at most ",
                    map.swizzle_bytes / element, " ", map.dtype, " elements)");
    return "";
}

}  // namespace

int tensor_map_data_type(const std::string& dtype) {
    return element_type(dtype).type;
}

int64_t tensor_map_element_bytes(const std::string& dtype) {
    return element_type(dtype).bytes;
}

int tensor_map_swizzle(int swizzle_bytes) {
    switch (swizzle_bytes) {
        case 0: return kTensorMapSwizzleNone;
        case 32: return kTensorMapSwizzle32B;
        case 64: return kTensorMapSwizzle64B;
        case 128: return kTensorMapSwizzle128B;
        default: break;
    }
    TESSEL_THROW(RuntimeError) << "tensor map: a swizzle of " << swizzle_bytes
                               << " bytes is not 0, 32, 64 or 128";
}

std::string tensor_map_layout_problem(const CudaTensorMap& map) {
    if (!find_element_type(map.dtype))
        return text("element type '", map.dtype, "' is not one TMA copies (", element_type_names(),
                    ")");
    size_t rank = map.dims.size();
    if (rank < 1 || rank > kTensorMapMaxRank)
        return text("rank ", rank, " is outside 1..5 (TMA copies tensors of 1 to 5 dimensions)");
    if (map.strides.size() != rank - 1)
        return text(map.strides.size(), " strides for rank ", rank,
                    " (one per dim after the "
                    "first: ",
                    rank - 1, ")");
    if (map.box.size() != rank) return text(map.box.size(), " box extents for rank ", rank);
    for (size_t i = 0; i < rank; ++i) {
        if (map.box[i] < 1 || map.box[i] > kTensorMapMaxBox)
            return text("box extent ", map.box[i], " of dim ", i, " is outside 1..256");
    }
    int s = map.swizzle_bytes;
    if (s != 0 && s != 32 && s != 64 && s != 128)
        return text("a swizzle of ", s, " bytes is not 0, 32, 64 or 128");
    return "";
}

std::string tensor_map_problem(const CudaTensorMap& map, uintptr_t address,
                               const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& strides) {
    std::string problem = tensor_map_layout_problem(map);
    if (problem.empty()) problem = box_problem(map);
    if (problem.empty()) problem = value_problem(map, address, dims, strides);
    return problem;
}

std::string tensor_map_text(const CudaTensorMap& map, const std::vector<int64_t>& dims) {
    std::string out = map.dtype + ", dims ";
    for (size_t i = 0; i < dims.size(); ++i) out += (i ? " x " : "") + std::to_string(dims[i]);
    return out + (dims.size() > 1 ? ", innermost first" : "");
}

std::string tensor_map_driver_problem() {
    if (driver().cuTensorMapEncodeTiled) return "";
    return "the NVIDIA driver is too old for TMA tensor maps (libcuda.so.1 has no "
           "cuTensorMapEncodeTiled, which CUDA 12.0 drivers and newer have); update the driver, "
           "or schedule this kernel without tma()";
}

EncodedTensorMap encode_tensor_map(const CudaTensorMap& map, const TensorMapValues& values,
                                   const std::string& what) {
    std::string problem = tensor_map_driver_problem();
    if (!problem.empty()) TESSEL_THROW(RuntimeError) << what << ": " << problem;
    const DriverApi& api = driver();
    auto rank = static_cast<unsigned>(map.dims.size());
    std::vector<unsigned long long> dims(values.dims.begin(), values.dims.end());
    std::vector<unsigned long long> strides(values.strides.begin(), values.strides.end());
    std::vector<unsigned> box(map.box.begin(), map.box.end());
    std::vector<unsigned> element_strides(rank, 1);
    EncodedTensorMap out;
    check(api.cuTensorMapEncodeTiled(
              &out, tensor_map_data_type(map.dtype), rank, reinterpret_cast<void*>(values.address),
              dims.data(), strides.data(), box.data(), element_strides.data(),
              kTensorMapInterleaveNone, tensor_map_swizzle(map.swizzle_bytes),
              kTensorMapL2Promotion128B, kTensorMapFloatOobFillNone),
          "cuTensorMapEncodeTiled for " + what);
    return out;
}

EncodedTensorMap TensorMapCache::get(size_t launch, size_t map, const TensorMapValues& values,
                                     const Encoder& encode) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (slots_.size() <= launch) slots_.resize(launch + 1);
    std::vector<Slot>& maps = slots_[launch];
    if (maps.size() <= map) maps.resize(map + 1);
    Slot& slot = maps[map];
    if (!slot.encoded || !(slot.values == values)) {
        slot.map = encode();  // a throw leaves the slot as it was
        slot.values = values;
        slot.encoded = true;
    }
    return slot.map;
}

}  // namespace tessel::internal::cuda
