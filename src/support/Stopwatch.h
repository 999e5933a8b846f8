// Elapsed wall time on the steady clock, for the tuner's and the measurement's time accounting.
#pragma once

#include <chrono>

namespace tessel::internal {

/// Seconds from `t0` to now.
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace tessel::internal
