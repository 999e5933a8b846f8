// Helpers of the feature tests (tests/unit/features_*_test.cpp): a schedule's raw (not
// log-scaled) features with the IR they were read from, and a check naming the column.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessel/auto_schedule/features/Features.h"
#include "tessel/lower/Lower.h"
#include "tessel/te/Operation.h"

namespace tessel::testing {

/// A program's raw features and its IR at the feature point (printed when a check fails).
struct RawFeatures {
    FeatureMatrix m;
    std::string ir;
    /// The value of feature `name` in `row`.
    float operator()(int row, const std::string& name) const {
        return m.at(row, FeatureMatrix::column(name));
    }
};

/// Lowers `s` to the feature point for `target` and extracts unscaled features.
inline RawFeatures raw_features(const Schedule& s, const std::vector<Tensor>& args,
                                const Target& target = Target("llvm")) {
    LowerOptions o;
    o.stop_after = "partition_loops";
    LoweredFunc f = lower(s, args, target, "main", o);
    return {extract_features(f, FeatureContext::from(s, target), FeatureOptions{false}),
            to_string(f)};
}

/// The n x n x n GEMM C = A B.
struct Gemm {
    Tensor A, B, C;
    explicit Gemm(int n, const std::string& suffix = "") {
        A = placeholder({n, n}, Float(32), "A" + suffix);
        B = placeholder({n, n}, Float(32), "B" + suffix);
        IterVar k = reduce_axis(Range(0, n), "k");
        C = compute(
            {n, n}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C" + suffix);
    }
    std::vector<Tensor> args() const { return {A, B, C}; }
};

}  // namespace tessel::testing

/// Expects feature `name` of `row` to be `value` (within float rounding), printing the IR.
#define EXPECT_FEATURE(f, row, name, value)                                             \
    EXPECT_NEAR((f)(row, name), (value), 1e-5 * std::max(1.0, std::abs(double(value)))) \
        << "feature " << (name) << " of row " << (row) << " in\n"                       \
        << (f).ir
