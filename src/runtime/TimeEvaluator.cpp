#include "tessel/runtime/TimeEvaluator.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "tessel/Error.h"

namespace tessel {
namespace internal {
namespace {

double steady_seconds() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

void check_options(const TimeEvaluatorOptions& o, int num_input_sets) {
    if (o.warmup < 0 || o.min_repeats < 1 || o.max_repeats < o.min_repeats ||
        !(o.min_total_seconds >= 0) || num_input_sets < 1) {
        TESSEL_THROW(RuntimeError)
            << "time_evaluate: invalid options (warmup " << o.warmup << ", min_repeats "
            << o.min_repeats << ", max_repeats " << o.max_repeats << ", min_total_seconds "
            << o.min_total_seconds << ", input sets " << num_input_sets
            << "); need warmup >= 0, 1 <= min_repeats <= max_repeats, min_total_seconds >= 0, "
               "at least one input set";
    }
}

}  // namespace
}  // namespace internal

TimingResult summarize_samples(std::vector<double> samples) {
    if (samples.empty()) TESSEL_THROW(RuntimeError) << "summarize_samples: no samples";
    TimingResult r;
    std::vector<double> sorted = samples;
    std::sort(sorted.begin(), sorted.end());
    size_t n = sorted.size();
    r.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    r.min = sorted.front();
    r.max = sorted.back();
    double sum = 0;
    for (double s : sorted) sum += s;
    r.mean = sum / static_cast<double>(n);
    double squares = 0;
    for (double s : sorted) squares += (s - r.mean) * (s - r.mean);
    r.stddev = std::sqrt(squares / static_cast<double>(n));
    r.samples = std::move(samples);
    return r;
}

TimingResult time_evaluate(const std::function<void(int input_set)>& fn, int num_input_sets,
                           const TimeEvaluatorOptions& options) {
    internal::check_options(options, num_input_sets);
    auto clock = options.clock ? options.clock : internal::steady_seconds;
    int64_t call = 0;
    for (int i = 0; i < options.warmup; ++i) fn(static_cast<int>(call++ % num_input_sets));
    std::vector<double> samples;
    double total = 0;
    while (static_cast<int>(samples.size()) < options.max_repeats) {
        double start = clock();
        fn(static_cast<int>(call++ % num_input_sets));
        double elapsed = clock() - start;
        samples.push_back(elapsed);
        total += elapsed;
        bool enough_samples = static_cast<int>(samples.size()) >= options.min_repeats;
        if (enough_samples && total >= options.min_total_seconds) break;
    }
    return summarize_samples(std::move(samples));
}

}  // namespace tessel
