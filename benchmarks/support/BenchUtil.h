// Small helpers the benchmark programs share.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "tessel/runtime/ThreadPool.h"

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

/// Calls `fn` untimed for at least `span` (at least once). Run before a library's timed calls
/// where another library ran just before: threads that spin for a while after a call (tessel's
/// pool for TESSEL_SPIN_US, 200 us by default; libgomp's by default for milliseconds) keep cores
/// busy until they give up, and this absorbs that. Sleeping instead would let the machine go
/// idle, and the next calls start cold (on these virtual machines a call after a 2 ms sleep took
/// twice as long as one back to back).
inline void warm_for(const std::function<void()>& fn, std::chrono::microseconds span) {
    auto end = std::chrono::steady_clock::now() + span;
    do fn();
    while (std::chrono::steady_clock::now() < end);
}

/// `warm_for` long enough for tessel's pool to stop spinning after a tessel call.
inline std::chrono::microseconds tessel_spin_margin() {
    return tessel::ThreadPool::default_spin() + std::chrono::milliseconds(1);
}

/// The median milliseconds per call of `a` and of `b` over `runs` samples each, alternating a
/// sample of `a` and one of `b` (after `warmup` of each), so that a slow spell of a shared machine
/// falls on both alike. A sample times `block` calls after `warm` of untimed ones (warm_for;
/// longer by default than tessel's spin and libgomp's, so that neither library's spinning
/// threads take the other's cores): each library runs back to back, as it would alone.
inline std::pair<double, double> interleaved_median_ms(
    const std::function<void()>& a, const std::function<void()>& b, int warmup, int runs,
    int block = 4, std::chrono::microseconds warm = std::chrono::milliseconds(100)) {
    std::vector<double> ma, mb;
    auto sample = [&](const std::function<void()>& fn) {
        warm_for(fn, warm);
        return seconds_of([&] {
                   for (int c = 0; c < block; ++c) fn();
               }) /
               block;
    };
    for (int rep = 0; rep < warmup + runs; ++rep) {
        double sa = sample(a), sb = sample(b);
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
