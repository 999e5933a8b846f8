// Element-wise comparison of computed values with reference values under a tolerance
// (tessel/Tolerance.h states the rule). Header-only and free of libtessel's types, so that both
// compare_to_reference (libtessel) and the measurement worker (libtessel_runtime alone: the worker
// checks a candidate's outputs where they are, instead of sending them to the client) use it.
#pragma once

#include <cmath>
#include <cstdint>

namespace tessel::internal {

/// |actual - expected| / (atol + rtol * |expected|): <= 1 passes. NaN matches only NaN and an
/// infinity only the same infinity (0 when they match, inf when not).
inline double error_ratio(double actual, double expected, double rtol, double atol) {
    if (std::isnan(expected) || std::isnan(actual))
        return std::isnan(expected) && std::isnan(actual) ? 0.0 : INFINITY;
    if (std::isinf(expected) || std::isinf(actual)) return actual == expected ? 0.0 : INFINITY;
    double err = std::fabs(actual - expected);
    if (err == 0) return 0.0;
    double allowed = atol + rtol * std::fabs(expected);
    return allowed == 0 ? INFINITY : err / allowed;
}

/// How `total` values compared: the elements out of tolerance and the worst one.
struct ValueComparison {
    int64_t mismatches = 0;
    int64_t worst = -1;  ///< the flat index with the largest ratio; -1 when none was compared
    double worst_actual = 0;
    double worst_expected = 0;
    double worst_ratio = 0;

    /// Counts element `i` (ratio from error_ratio).
    void visit(int64_t i, double actual, double expected, double ratio) {
        if (ratio > 1.0) ++mismatches;
        if (worst < 0 || ratio > worst_ratio) {
            worst = i;
            worst_ratio = ratio;
            worst_actual = actual;
            worst_expected = expected;
        }
    }
};

/// Compares `n` values read through raw pointers (float or double on either side).
template <typename Actual, typename Expected>
ValueComparison compare_values(const Actual* actual, const Expected* expected, int64_t n,
                               double rtol, double atol) {
    ValueComparison c;
    for (int64_t i = 0; i < n; ++i) {
        double a = actual[i], e = expected[i];
        c.visit(i, a, e, error_ratio(a, e, rtol, atol));
    }
    return c;
}

}  // namespace tessel::internal
