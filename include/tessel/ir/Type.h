// Scalar and vector data types of tessel's IR.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace tessel {

/// The kind of a data type; bits and lanes complete it.
enum class TypeCode : uint8_t {
    Int,     ///< two's-complement signed integer: 8, 16, 32 or 64 bits
    UInt,    ///< unsigned integer: 8, 16, 32 or 64 bits
    Float,   ///< IEEE-754 binary float: 16, 32 or 64 bits
    BFloat,  ///< bfloat16: float32's exponent, 7 stored mantissa bits
    Bool,    ///< truth value (1 bit)
    Handle,  ///< opaque pointer: buffer variables after flattening
};

/// A data type: code, bits per lane and number of lanes (1 for scalars).
struct Type {
    TypeCode code = TypeCode::Int;
    uint8_t bits = 32;
    uint16_t lanes = 1;

    constexpr Type() = default;
    constexpr Type(TypeCode c, int b, int l = 1)
        : code(c), bits(static_cast<uint8_t>(b)), lanes(static_cast<uint16_t>(l)) {}

    bool is_int() const { return code == TypeCode::Int; }
    bool is_uint() const { return code == TypeCode::UInt; }
    /// Int or UInt (not Bool).
    bool is_int_or_uint() const { return is_int() || is_uint(); }
    /// Float or BFloat.
    bool is_float() const { return code == TypeCode::Float || code == TypeCode::BFloat; }
    bool is_bfloat() const { return code == TypeCode::BFloat; }
    bool is_bool() const { return code == TypeCode::Bool; }
    bool is_handle() const { return code == TypeCode::Handle; }
    bool is_scalar() const { return lanes == 1; }
    bool is_vector() const { return lanes > 1; }

    /// The same type with one lane.
    Type element_of() const { return Type(code, bits, 1); }
    /// The same element type with `n` lanes.
    Type with_lanes(int n) const { return Type(code, bits, n); }
    /// Bytes of one lane, rounded up (bool takes one byte in memory).
    int bytes() const { return (bits + 7) / 8; }

    /// Largest and smallest representable integer of an Int/UInt/Bool type (as int64; UInt64's
    /// max saturates at INT64_MAX).
    int64_t max_int() const;
    int64_t min_int() const;
    /// Machine epsilon of a float type (2^-mantissa bits); 0 for integer types.
    double epsilon() const;

    bool operator==(const Type& o) const {
        return code == o.code && bits == o.bits && lanes == o.lanes;
    }
    bool operator!=(const Type& o) const { return !(*this == o); }

    /// "float32", "int64x4", "bool", "bfloat16" ...
    std::string str() const;
    /// Parses the output of str(); throws DSLError on anything else.
    static Type parse(const std::string& name);
};

std::ostream& operator<<(std::ostream& os, const Type& t);

inline constexpr Type Int(int bits, int lanes = 1) {
    return Type(TypeCode::Int, bits, lanes);
}
inline constexpr Type UInt(int bits, int lanes = 1) {
    return Type(TypeCode::UInt, bits, lanes);
}
inline constexpr Type Float(int bits, int lanes = 1) {
    return Type(TypeCode::Float, bits, lanes);
}
inline constexpr Type BFloat(int bits = 16, int lanes = 1) {
    return Type(TypeCode::BFloat, bits, lanes);
}
inline constexpr Type Bool(int lanes = 1) {
    return Type(TypeCode::Bool, 1, lanes);
}
inline constexpr Type Handle() {
    return Type(TypeCode::Handle, 64, 1);
}

}  // namespace tessel
