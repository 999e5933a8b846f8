// Exact integer helpers shared by the arithmetic module: division with IR.h's semantics on int64,
// gcd, and the overflow policy.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

#include "tessel/ir/IR.h"

namespace tessel::internal {

using int128 = __int128;

/// Signed int32/int64 ("index arithmetic") is assumed not to overflow (ir/IR.h); every other
/// integer type wraps and only rewrites valid under wrapping apply to it.
inline bool assumes_no_overflow(Type t) {
    return t.is_int() && t.bits >= 32;
}

/// Truncating division with IR.h's rules: x / 0 = 0, INT64_MIN / -1 = INT64_MIN.
inline int64_t div_trunc(int64_t a, int64_t b) {
    if (b == 0) return 0;
    if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
    return a / b;
}
inline int64_t mod_trunc(int64_t a, int64_t b) {
    if (b == 0 || b == -1) return 0;
    return a % b;
}
/// Floor division / modulo (remainder with the divisor's sign), x / 0 = 0.
inline int64_t div_floor(int64_t a, int64_t b) {
    if (b == 0) return 0;
    int64_t q = div_trunc(a, b);
    if (b != -1 && a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
}
inline int64_t mod_floor(int64_t a, int64_t b) {
    int64_t r = mod_trunc(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
inline int128 div_floor128(int128 a, int128 b) {
    int128 q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
}

inline int64_t gcd64(int64_t a, int64_t b) {
    uint64_t x = a < 0 ? 0 - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
    uint64_t y = b < 0 ? 0 - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
    while (y != 0) {
        uint64_t t = x % y;
        x = y;
        y = t;
    }
    return static_cast<int64_t>(x);
}

/// The value of an int128 as int64 if it fits.
inline std::optional<int64_t> fit64(int128 v) {
    if (v < std::numeric_limits<int64_t>::min() || v > std::numeric_limits<int64_t>::max())
        return std::nullopt;
    return static_cast<int64_t>(v);
}

/// The bits of an integer or bool constant (or a Broadcast of one) as int64: UIntImm values
/// above INT64_MAX come back as their two's-complement bit pattern.
inline std::optional<int64_t> const_bits(const Expr& e) {
    if (!e.defined()) return std::nullopt;
    if (const auto* b = e.as<Broadcast>()) return const_bits(b->value);
    if (const auto* i = e.as<IntImm>()) return i->value;
    if (const auto* u = e.as<UIntImm>()) return static_cast<int64_t>(u->value);
    return std::nullopt;
}

/// Smallest / largest value of an integer type as int128 (uint64 included exactly).
inline int128 type_min128(Type t) {
    return t.is_uint() ? 0 : int128(t.element_of().min_int());
}
inline int128 type_max128(Type t) {
    if (t.is_uint() && t.bits == 64) return (int128(1) << 64) - 1;
    return int128(t.element_of().max_int());
}

/// The mathematical value of an integer constant of type t (uint64 read as unsigned).
inline int128 const_value128(int64_t bits, Type t) {
    if (t.is_uint() && t.bits == 64) return int128(static_cast<uint64_t>(bits));
    return int128(bits);
}

}  // namespace tessel::internal
