// Tolerances scaled by dtype and reduction length, and element-wise comparison with a reference.
#include "tessel/Tolerance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace tessel {

Tolerance tolerance_for(Type dtype, int64_t reduction_length, double magnitude) {
    if (!dtype.is_float()) return {0.0, 0.0};
    const double eps = dtype.epsilon();
    const double k = static_cast<double>(std::max<int64_t>(reduction_length, 1));
    return {4.0 * eps * (1.0 + std::sqrt(k)), 2.0 * eps * k * std::fabs(magnitude)};
}

namespace {

/// |error| / allowed error of one element: <= 1 passes. NaN and infinities must match exactly.
double error_ratio(double actual, double expected, Tolerance tol) {
    if (std::isnan(expected) || std::isnan(actual))
        return std::isnan(expected) && std::isnan(actual) ? 0.0 : INFINITY;
    if (std::isinf(expected) || std::isinf(actual)) return actual == expected ? 0.0 : INFINITY;
    double err = std::fabs(actual - expected);
    if (err == 0) return 0.0;
    double allowed = tol.atol + tol.rtol * std::fabs(expected);
    return allowed == 0 ? INFINITY : err / allowed;
}

}  // namespace

CompareResult compare_to_reference(const HostArray& actual, const HostArray& expected,
                                   Tolerance tolerance) {
    CompareResult r;
    r.tolerance = tolerance;
    if (actual.shape() != expected.shape()) {
        r.ok = false;
        r.shape_error = "shape " + format_index(actual.shape()) + " differs from the reference's " +
                        format_index(expected.shape());
        return r;
    }
    r.total = actual.size();
    const bool ints = !actual.dtype().is_float() && !expected.dtype().is_float();
    int64_t worst = -1;
    auto visit = [&](int64_t i, double a, double e, double ratio) {
        if (ratio > 1.0) ++r.mismatches;
        if (worst < 0 || ratio > r.worst_ratio) {
            worst = i;
            r.worst_ratio = ratio;
            r.worst_actual = a;
            r.worst_expected = e;
        }
    };
    // float32 and float64 storage compare through raw pointers: a tuner compares every
    // candidate's outputs (64 M elements for an 8192^2 softmax), where get()'s checks and
    // dispatch per element cost seconds.
    auto raw = [](const HostArray& x, auto&& fn) {
        if (x.holds_doubles() || (x.dtype().code == TypeCode::Float && x.dtype().bits == 64))
            return fn(static_cast<const double*>(x.data())), true;
        if (x.dtype().code == TypeCode::Float && x.dtype().bits == 32)
            return fn(static_cast<const float*>(x.data())), true;
        return false;
    };
    bool fast = false;
    if (!ints)
        raw(actual, [&](const auto* pa) {
            fast = raw(expected, [&](const auto* pe) {
                for (int64_t i = 0; i < r.total; ++i) {
                    double a = pa[i], e = pe[i];
                    visit(i, a, e, error_ratio(a, e, tolerance));
                }
            });
        });
    for (int64_t i = 0; !fast && i < r.total; ++i) {
        double a = actual.get(i), e = expected.get(i);
        visit(i, a, e,
              ints ? (actual.get_int(i) == expected.get_int(i) ? 0.0 : INFINITY)
                   : error_ratio(a, e, tolerance));
    }
    if (worst >= 0) r.worst_index = actual.index_of(worst);
    r.ok = r.mismatches == 0;
    return r;
}

std::string CompareResult::message() const {
    std::ostringstream os;
    os.precision(9);
    if (!shape_error.empty()) return shape_error;
    if (ok) {
        os << "all " << total << " elements within tolerance";
    } else {
        os << mismatches << " of " << total << " elements differ";
    }
    if (total > 0)
        os << "; worst at " << format_index(worst_index) << ": actual " << worst_actual
           << " expected " << worst_expected << " (error "
           << std::fabs(worst_actual - worst_expected) << ", " << worst_ratio << "x allowed)";
    os << " [rtol " << tolerance.rtol << ", atol " << tolerance.atol << "]";
    return os.str();
}

}  // namespace tessel
