// The same seed chooses the same candidates: two tunings of one task with one seed, each with its
// own log, measure the same states in their first round (later rounds depend on the measured
// times, which vary); another seed chooses others.
#include "tune/TuneTestUtil.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

std::vector<std::string> first_round(const SearchTask& task, const std::string& log,
                                     uint64_t seed) {
    TuningOptions o = small_options(log, 8);
    o.seed = seed;
    tune(task, o);
    std::vector<std::string> keys;
    for (const TuningRecord& r : trial_records(read_records(log).records))
        keys.push_back(state_key(task.apply_record(r.schedule_json)));
    return keys;
}

}  // namespace

TEST(TuneDeterminism, TheFirstRoundDependsOnlyOnTheSeed) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    SearchTask task = small_gemm_task(64);
    std::vector<std::string> a = first_round(task, fresh_log("a"), 5);
    std::vector<std::string> b = first_round(task, fresh_log("b"), 5);
    std::vector<std::string> c = first_round(task, fresh_log("c"), 6);
    ASSERT_EQ(a.size(), 8u);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
}
