// The time evaluator: measures a callable the way benchmarks and the tuner's measurement workers
// need it.
//
//   TimingResult r = time_evaluate([&](int set) { kernel(inputs[set]); }, inputs.size(), {});
//   std::cout << r.median << " s\n";
//
// It runs `warmup` calls first (not recorded), then timed calls, one sample each, until both
// `min_repeats` samples and `min_total_seconds` of sampled time are reached, or `max_repeats`
// samples are taken. Calls rotate over `num_input_sets` input sets (call k uses set k mod n,
// counting warm-up calls), so consecutive calls do not find their inputs in cache. The clock is
// injectable, which makes the behaviour deterministic in tests.
#pragma once

#include <functional>
#include <vector>

namespace tessel {

/// Options of time_evaluate().
struct TimeEvaluatorOptions {
    int warmup = 1;                   ///< untimed calls before sampling (>= 0)
    int min_repeats = 3;              ///< samples taken at least (>= 1)
    int max_repeats = 1000;           ///< samples taken at most (>= min_repeats)
    double min_total_seconds = 0.05;  ///< sampled time to reach before stopping (>= 0)
    /// Seconds from an arbitrary origin; defaults to std::chrono::steady_clock.
    std::function<double()> clock;
};

/// Samples of one measurement and their statistics, in seconds.
struct TimingResult {
    std::vector<double> samples;  ///< per-call times in call order
    double median = 0;            ///< middle sample (mean of the two middle ones for even counts)
    double mean = 0;
    double min = 0;
    double max = 0;
    double stddev = 0;  ///< population standard deviation
};

/// Statistics of `samples` (at least one; RuntimeError otherwise).
TimingResult summarize_samples(std::vector<double> samples);

/// Measures `fn` (see the file comment); `fn` receives the input-set index. Throws RuntimeError on
/// invalid options or `num_input_sets` < 1; exceptions from `fn` propagate.
TimingResult time_evaluate(const std::function<void(int input_set)>& fn, int num_input_sets,
                           const TimeEvaluatorOptions& options);

}  // namespace tessel
