// Tolerances scaled by dtype and reduction length, and element-wise comparison with a reference.
#include "tessel/Tolerance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "runtime/CompareValues.h"

namespace tessel {

Tolerance tolerance_for(Type dtype, int64_t reduction_length, double magnitude) {
    if (!dtype.is_float()) return {0.0, 0.0};
    const double eps = dtype.epsilon();
    const double k = static_cast<double>(std::max<int64_t>(reduction_length, 1));
    return {4.0 * eps * (1.0 + std::sqrt(k)), 2.0 * eps * k * std::fabs(magnitude)};
}

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
    const double rtol = tolerance.rtol, atol = tolerance.atol;
    internal::ValueComparison c;
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
                c = internal::compare_values(pa, pe, r.total, rtol, atol);
            });
        });
    for (int64_t i = 0; !fast && i < r.total; ++i) {
        double a = actual.get(i), e = expected.get(i);
        c.visit(i, a, e,
                ints ? (actual.get_int(i) == expected.get_int(i) ? 0.0 : INFINITY)
                     : internal::error_ratio(a, e, rtol, atol));
    }
    r.mismatches = c.mismatches;
    r.worst_ratio = c.worst_ratio;
    r.worst_actual = c.worst_actual;
    r.worst_expected = c.worst_expected;
    if (c.worst >= 0) r.worst_index = actual.index_of(c.worst);
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
