// How far a computed tensor may be from the reference interpreter's ideal result.
//
// The reference interpreter (te/ReferenceInterpreter.h) computes float tensors in double without
// rounding to the declared width. A kernel computing in float32 or float16 rounds after every
// operation, so it differs from the ideal value by an amount that grows with the dtype's epsilon
// and with the length K of the reductions the element went through. An element passes when
//
//     |actual - expected| <= atol + rtol * |expected|        (NaN matches only NaN, inf only
//                                                              the same inf)
// with, for a float dtype of epsilon eps (2^-23 for float32, 2^-10 float16, 2^-7 bfloat16),
//
//     rtol = 4 * eps * (1 + sqrt(K))
//     atol = 2 * eps * K * magnitude
//
// Why: summing K terms of typical size `magnitude` in a given order makes one rounding error of at
// most eps/2 times the running sum per addition. For terms of mixed signs (random inputs centred on
// zero) the running sums have size ~sqrt(k)*magnitude and the errors add up like a random walk, to
// about 0.35 * eps * K * magnitude, independently of the result itself: that is what atol covers
// (with a factor ~6 to stay clear of the largest of many outputs), and it matters most for outputs
// that cancel to near zero. For terms of one sign the result grows like K*magnitude and the error
// like eps*K^1.5*magnitude, i.e. eps*sqrt(K) relative to the result: that is what rtol covers.
// Products, casts and a final rounding to the dtype add a few eps relative (the "1 +" and the
// factor 4). K = 1 for elementwise operators gives rtol = 8 eps, atol = 2 eps * magnitude.
// Integer dtypes must match exactly (rtol = atol = 0): integer arithmetic has no rounding.
// Chains of reductions (softmax: max, sum, divide) should pass the largest K; operators with
// transcendental functions from a fast math library can `scaled()` the tolerance.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/HostArray.h"
#include "tessel/ir/Type.h"

namespace tessel {

/// Allowed error: |actual - expected| <= atol + rtol * |expected|.
struct Tolerance {
    double rtol = 0;
    double atol = 0;
    /// Both bounds multiplied by `factor`.
    Tolerance scaled(double factor) const { return {rtol * factor, atol * factor}; }
};

/// The tolerance for results of `dtype` that went through reductions of `reduction_length` terms
/// of typical absolute size `magnitude` (formula and reasoning in the file comment). Exact (zero)
/// for integer and bool dtypes. reduction_length < 1 counts as 1.
Tolerance tolerance_for(Type dtype, int64_t reduction_length = 1, double magnitude = 1.0);

/// The outcome of comparing an array with its reference.
struct CompareResult {
    bool ok = true;                    ///< shapes match and no element is out of tolerance
    std::string shape_error;           ///< set when the shapes or element counts differ
    int64_t mismatches = 0;            ///< elements out of tolerance
    int64_t total = 0;                 ///< elements compared
    std::vector<int64_t> worst_index;  ///< the element with the largest error / allowed ratio
    double worst_actual = 0;
    double worst_expected = 0;
    double worst_ratio = 0;  ///< its |error| / allowed error (> 1 fails; inf for NaN)
    Tolerance tolerance;

    explicit operator bool() const { return ok; }
    /// One line: "3 of 4096 elements differ; worst at [1, 7]: actual 0.51 expected 0.5 ...".
    std::string message() const;
};

/// Compares `actual` (e.g. a kernel's output) with `expected` (e.g. the reference interpreter's
/// result) element by element, both read as doubles; dtypes may differ (a float16 kernel against
/// a reference held as double).
CompareResult compare_to_reference(const HostArray& actual, const HostArray& expected,
                                   Tolerance tolerance);

}  // namespace tessel

/// A GoogleTest assertion: `EXPECT_CLOSE_TO_REFERENCE(out, ref, tolerance_for(Float(32), K));`
/// prints CompareResult::message() on failure. Usable wherever <gtest/gtest.h> is included.
#define EXPECT_CLOSE_TO_REFERENCE(actual, expected, tolerance)                  \
    do {                                                                        \
        ::tessel::CompareResult tessel_cmp_ =                                   \
            ::tessel::compare_to_reference((actual), (expected), (tolerance));  \
        EXPECT_TRUE(tessel_cmp_.ok)                                             \
            << #actual << " vs " << #expected << ": " << tessel_cmp_.message(); \
    } while (0)
#define ASSERT_CLOSE_TO_REFERENCE(actual, expected, tolerance)                  \
    do {                                                                        \
        ::tessel::CompareResult tessel_cmp_ =                                   \
            ::tessel::compare_to_reference((actual), (expected), (tolerance));  \
        ASSERT_TRUE(tessel_cmp_.ok)                                             \
            << #actual << " vs " << #expected << ": " << tessel_cmp_.message(); \
    } while (0)
