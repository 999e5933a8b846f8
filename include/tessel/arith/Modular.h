// Modular analysis: which residue class an integer expression lies in.
//
// Used for alignment and vector-load decisions (e.g. `i*8 + 4` ≡ 4 mod 8) and by the simplifier
// (e.g. `x*2 == 3` is false). Index arithmetic (signed int32/int64) is assumed not to overflow;
// for other integer types only facts modulo powers of two that divide 2^bits survive wrapping,
// and the analysis keeps only those.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "tessel/ir/IR.h"

namespace tessel {

/// The set { coeff * k + base : k integer }. coeff == 0: the constant `base`; coeff == 1: any
/// integer (nothing known). Normalised so that coeff >= 0 and 0 <= base < coeff when coeff > 0.
struct ModularSet {
    int64_t coeff = 1;
    int64_t base = 0;

    ModularSet() = default;
    ModularSet(int64_t coeff, int64_t base);
    /// Nothing known.
    static ModularSet everything() { return ModularSet(1, 0); }
    /// Exactly the constant v.
    static ModularSet constant(int64_t v) { return ModularSet(0, v); }
    bool is_constant() const { return coeff == 0; }
    bool is_everything() const { return coeff == 1; }
    bool operator==(const ModularSet& o) const { return coeff == o.coeff && base == o.base; }
};

/// Variable (by identity) → what is known of it modulo something.
using ModularScope = std::unordered_map<const Variable*, ModularSet>;

/// The smallest modular set containing both (the gcd union).
ModularSet modular_union(const ModularSet& a, const ModularSet& b);

/// The residue class of an integer expression through +, -, *, floordiv/truncdiv by constants
/// (when divisible), floormod by constants, min/max/select (union), Let, casts between integer
/// types that keep the value, Ramp (base and stride) and Broadcast. Unknown variables: everything.
ModularSet modular_set_of(const Expr& e, const ModularScope& scope = {});

}  // namespace tessel
