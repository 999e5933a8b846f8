// Benchmark: the auto-scheduler's features and cost model.
//
// Feature extraction speed: a 1024^3 GEMM state as Ansor's CPU sketch makes it (a local write
// cache, SSRSRS tiling, the output tiled to match with the cache computed there, fused parallel
// outer loops, vectorised and unrolled inner loops, an auto-unroll pragma), one thread: the median
// of lowering it to the feature point, of extracting its features from that IR, and of the whole
// per-candidate path (replay the steps, lower, extract); then the mean over the data set.
//
// Ranking quality: a data set of measured programs (benchmarks/cost_model/Dataset.h: random legal
// schedules of 4 GEMM and 4 conv2d tasks, built through LLVM, checked against the reference
// interpreter and timed on one thread; generated on the first run, minutes, and cached in the
// build folder), split 80/20 at random and by generation order; the model trains on the first
// part and ranks the second: pairwise accuracy and recall@30
// (auto_schedule/cost_model/CostModel.h).
//
// Checked first: the GEMM state's 64^3 instance in the loop-IR interpreter against the reference
// interpreter; every program of the data set against the reference; the model's determinism.
//
// Arguments: [programs] (default 5000).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <random>

#include "cost_model/Dataset.h"
#include "cost_model/Evaluate.h"
#include "support/BenchUtil.h"
#include "support/GemmState.h"
#include "tessel/HostArray.h"
#include "tessel/Tolerance.h"
#include "tessel/auto_schedule/cost_model/CostModel.h"
#include "tessel/auto_schedule/features/Features.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"
#include "tessel/te/Operation.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;

namespace {

using bench::Gemm;
using bench::gemm;
using bench::gemm_state;

void feature_speed() {
    const int n = 1024;
    Gemm g = gemm(n);
    std::vector<Step> steps = gemm_state(g, n);
    Schedule base = create_schedule({g.C});
    std::vector<Tensor> args{g.A, g.B, g.C};
    Target target("llvm");
    LowerOptions to_features;
    to_features.stop_after = "partition_loops";
    Schedule state = replay(base, steps);
    LoweredFunc f = lower(state, args, target, "main", to_features);
    FeatureContext context = FeatureContext::from(state, target);
    FeatureMatrix m = extract_features(f, context);
    std::printf("1024^3 GEMM state: %zu steps, %d store rows x %d features, one thread\n",
                steps.size(), m.rows, kNumFeatures);
    double lower_ms = median_ms([&] { lower(state, args, target, "main", to_features); }, 20, 300);
    double extract_ms = median_ms([&] { extract_features(f, context); }, 50, 2000);
    double all_ms = median_ms(
        [&] {
            Schedule s = replay(base, steps);
            extract_features(lower(s, args, target, "main", to_features),
                             FeatureContext::from(s, target));
        },
        20, 300);
    std::printf("  lowering to the feature point   %8.4f ms\n", lower_ms);
    std::printf("  extracting the features         %8.4f ms\n", extract_ms);
    std::printf("  replay + lowering + extraction  %8.4f ms  (bar: <= 0.5 ms)\n", all_ms);
    std::printf("BENCH cost_model lower_to_features_gemm1024 ms=%.4f\n", lower_ms);
    std::printf("BENCH cost_model extract_features_gemm1024 ms=%.4f\n", extract_ms);
    std::printf("BENCH cost_model replay_lower_extract_gemm1024 ms=%.4f\n", all_ms);
}

void describe(const bench::Dataset& d, const std::string& cache) {
    int ok = 0, build = 0, wrong = 0;
    for (const bench::DatasetRecord& r : d.records)
        (r.error == 0 ? ok : r.error == 1 ? build : wrong)++;
    std::printf(
        "data set %s: %zu generated programs (random legal schedules, not tuner records) "
        "of %zu tasks: %d measured, %d failed to build, %d wrong (none expected)\n",
        d.name.c_str(), d.records.size(), d.tasks.size(), ok, build, wrong);
    for (const SearchTask& t : d.tasks) std::printf("  task %s\n", t.key().c_str());
    if (d.generation_seconds > 0)
        std::printf("  generated in %.0f s, cached in %s\n", d.generation_seconds, cache.c_str());
    else
        std::printf("  read from the cache %s\n", cache.c_str());
}

int ranking(int size) {
    std::string cache = std::string(TESSEL_BENCH_DATA_DIR) + "/cost_model_dataset.jsonl";
    bench::Dataset d = bench::load_or_generate_dataset(cache, size, 1, Target("llvm"));
    describe(d, cache);
    int wrong = 0;
    for (const bench::DatasetRecord& r : d.records) wrong += r.error == 2;
    if (wrong) return 1;
    double feature_ms = 0;
    std::vector<MeasuredProgram> programs = bench::measured_programs(d, &feature_ms);
    std::printf("features of the data set: %.4f ms per program (replay + lowering + extraction)\n",
                feature_ms);
    CostModelOptions options;
    options.seed = 1;
    options.nthread = 2;
    if (!bench::check_deterministic(programs, options)) {
        std::printf("check failed: two models trained with one seed predict differently\n");
        return 1;
    }
    std::vector<size_t> order(programs.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
    size_t cut = programs.size() * 8 / 10;
    std::vector<MeasuredProgram> train, test, first, last;
    for (size_t i = 0; i < order.size(); ++i)
        (i < cut ? train : test).push_back(programs[order[i]]);
    for (size_t i = 0; i < programs.size(); ++i) (i < cut ? first : last).push_back(programs[i]);
    double noise = bench::remeasured_pair_agreement(d, 25, 11);
    std::printf(
        "noise floor: re-measuring 25 programs per task orders %.4f of their pairs as the "
        "data set does\n",
        noise);
    RankingQuality r = bench::evaluate_split("random split", train, test, options);
    RankingQuality t = bench::evaluate_split("time split", first, last, options);
    std::printf("BENCH cost_model features_dataset ms=%.4f\n", feature_ms);
    std::printf("BENCH cost_model remeasured pairwise_agreement=%.4f\n", noise);
    std::printf("BENCH cost_model random_split pairwise_accuracy=%.4f recall@30=%.4f\n",
                r.pairwise_accuracy, r.recall_at_k);
    std::printf("BENCH cost_model time_split pairwise_accuracy=%.4f recall@30=%.4f\n",
                t.pairwise_accuracy, t.recall_at_k);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    setenv("TESSEL_NUM_THREADS", "1", 1);  // programs are timed on one thread
    int size = argc > 1 ? std::atoi(argv[1]) : 5000;
    if (!bench::check_gemm_state()) return 1;
    feature_speed();
    return ranking(size);
}
