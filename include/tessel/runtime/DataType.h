// The runtime's element type: DLPack's (code, bits, lanes), without the compiler's tessel::Type so
// that libtessel_runtime stands alone. Codegen converts between the two.
#pragma once

#include <cstdint>
#include <string>

#include "tessel/runtime/DLPack.h"

namespace tessel {

/// The kind of a runtime element type; the values are DLPack's DLDataTypeCode.
enum class DataTypeCode : uint8_t {
    Int = dlpack::kDLInt,
    UInt = dlpack::kDLUInt,
    Float = dlpack::kDLFloat,
    Handle = dlpack::kDLOpaqueHandle,
    BFloat = dlpack::kDLBfloat,
    Bool = dlpack::kDLBool,
};

/// An element type with DLDataType's layout: code, bits per lane, lanes.
struct DataType {
    DataTypeCode code = DataTypeCode::Float;
    uint8_t bits = 32;
    uint16_t lanes = 1;

    /// Bytes of one element (all lanes), rounded up; bool takes one byte per lane.
    int64_t bytes() const { return ((int64_t(bits) + 7) / 8) * lanes; }
    /// "float32", "int8", "bool", "float32x4" ...
    std::string str() const;
    /// The DLPack form of this type.
    dlpack::DLDataType to_dlpack() const { return {static_cast<uint8_t>(code), bits, lanes}; }
    /// Converts a DLPack type; throws RuntimeError on a code tessel does not know (e.g. complex).
    static DataType from_dlpack(dlpack::DLDataType t);

    bool operator==(const DataType& o) const = default;
};

/// The common element types.
inline constexpr DataType float32() {
    return {DataTypeCode::Float, 32, 1};
}
inline constexpr DataType float64() {
    return {DataTypeCode::Float, 64, 1};
}
inline constexpr DataType float16() {
    return {DataTypeCode::Float, 16, 1};
}
inline constexpr DataType int32() {
    return {DataTypeCode::Int, 32, 1};
}
inline constexpr DataType int64() {
    return {DataTypeCode::Int, 64, 1};
}
inline constexpr DataType int8() {
    return {DataTypeCode::Int, 8, 1};
}
inline constexpr DataType uint8() {
    return {DataTypeCode::UInt, 8, 1};
}
inline constexpr DataType boolean() {
    return {DataTypeCode::Bool, 8, 1};
}

}  // namespace tessel
