// SplitMix64 (Steele, Lea and Flood, 2014): the mixing function behind tessel's seeded draws (the
// search's samples, the tuner's rounds, the task scheduler, the cost model's untrained scores,
// random inputs), so that a draw depends only on its seed, the same on every platform.
#pragma once

#include <cstdint>

namespace tessel::internal {

/// SplitMix64's output for the state `x` (advanced by its increment first): a bijective mix of
/// 64 bits with good avalanche, for deriving independent seeds from (seed, index) pairs.
inline uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/// A double uniform in [0, 1) from the top 53 of 64 random bits.
inline double unit_interval(uint64_t bits) {
    return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

/// SplitMix64 as a stream: next() is mix() of the state, which then advances.
struct SplitMix64 {
    uint64_t state;
    uint64_t next() {
        uint64_t z = mix(state);
        state += 0x9e3779b97f4a7c15ULL;
        return z;
    }
    /// Uniform in [0, 1).
    double unit() { return unit_interval(next()); }
};

}  // namespace tessel::internal
