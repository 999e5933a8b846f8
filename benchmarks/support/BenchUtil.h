// Small helpers the benchmark programs share.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <utility>
#include <vector>

/// Wall-clock seconds of one call of `fn`.
inline double seconds_of(const std::function<void()>& fn) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The median of `v` (the upper middle element for even sizes); `v` must not be empty.
inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/// The median milliseconds of `work` over `runs` calls after `warmup` calls.
inline double median_ms(const std::function<void()>& work, int warmup, int runs) {
    std::vector<double> ms;
    for (int rep = 0; rep < warmup + runs; ++rep) {
        double s = seconds_of(work);
        if (rep >= warmup) ms.push_back(s * 1e3);
    }
    return median(ms);
}

/// The median milliseconds of `a` and of `b` over `runs` calls each, alternating a call of `a` and
/// one of `b` (after `warmup` of each): a slow spell of a shared machine falls on both alike.
inline std::pair<double, double> interleaved_median_ms(const std::function<void()>& a,
                                                       const std::function<void()>& b,
                                                       int warmup, int runs) {
    std::vector<double> ma, mb;
    for (int rep = 0; rep < warmup + runs; ++rep) {
        double sa = seconds_of(a), sb = seconds_of(b);
        if (rep >= warmup) ma.push_back(sa * 1e3), mb.push_back(sb * 1e3);
    }
    return {median(ma), median(mb)};
}

/// `n` floats uniform in [-1, 1) from `seed` (never zeros: benchmarks do not run on them).
inline std::vector<float> random_floats(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
}
