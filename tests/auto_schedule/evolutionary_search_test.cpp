// The evolutionary search (auto_schedule/tuner/EvolutionarySearch.h) on a 64^3 GEMM with a model
// trained on synthetic costs: it returns distinct states that lower, best-scored first, none of
// the skipped ones; the result depends on the seed alone, not on the thread count; the best
// measured states seed it; one of its states matches the reference.
#include <set>

#include "auto_schedule/SearchTestUtil.h"
#include "tessel/auto_schedule/features/Features.h"
#include "tessel/auto_schedule/tuner/EvolutionarySearch.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

SearchSpaceOptions unlowered() {
    SearchSpaceOptions o;
    o.lower = false;
    return o;
}

// A model trained on `n` random states whose cost falls with their vector and parallel lengths.
void train(const SearchSpace& space, CostModel& model, int n) {
    std::vector<MeasuredProgram> programs;
    for (const SearchState& s : space.sample(n, 99).states) {
        MeasuredProgram p;
        p.task_key = space.task().key();
        p.features = extract_features(space.task(), s.schedule);
        double speed = 1;
        for (int r = 0; r < p.features.rows; ++r)
            speed += p.features.at(r, FeatureMatrix::column("vec_len")) +
                     p.features.at(r, FeatureMatrix::column("parallel_len"));
        p.costs = {1 / speed};
        programs.push_back(std::move(p));
    }
    model.train(programs);
    ASSERT_TRUE(model.trained());
}

EvolutionOptions small(int threads) {
    EvolutionOptions o;
    o.population = 96;
    o.generations = 2;
    o.num_threads = threads;
    return o;
}

std::vector<std::string> keys_of(const std::vector<ScoredState>& states) {
    std::vector<std::string> keys;
    for (const ScoredState& s : states) keys.push_back(state_key(s.state.schedule));
    return keys;
}

struct EvolutionarySearchTest : ::testing::Test {
    SearchTask task{
        "matmul", {int64_t(64), int64_t(64), int64_t(64), Float(32)}, Target("llvm -num-cores=2")};
    SearchSpace space{task, unlowered()};
    std::optional<CostModel> model;  // made in SetUp: a build without XGBoost skips
    void SetUp() override {
        if (!CostModel::available()) GTEST_SKIP() << "built without XGBoost";
        model.emplace(CostModelOptions{.seed = 1, .min_programs = 16, .num_rounds = 30});
        train(space, *model, 48);
    }
};

}  // namespace

TEST_F(EvolutionarySearchTest, ReturnsDistinctUnskippedStatesBestFirst) {
    EvolutionStats stats;
    std::vector<ScoredState> best =
        evolutionary_search(space, *model, {}, {}, 12, 3, small(2), &stats);
    ASSERT_EQ(best.size(), 12u);
    std::vector<std::string> keys = keys_of(best);
    EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), 12u);
    for (size_t i = 1; i < best.size(); ++i) EXPECT_GE(best[i - 1].score, best[i].score);
    for (const ScoredState& s : best) EXPECT_NO_THROW(extract_features(task, s.state.schedule));
    // 96 initial states and 2 generations of 96 children, scored (less duplicates and failures).
    EXPECT_EQ(stats.children + stats.failed_children, 2 * 96);
    EXPECT_EQ(stats.scored + stats.rejected + stats.duplicates, 96 + stats.children);
    EXPECT_GT(stats.scored, 200);

    std::unordered_set<std::string> skip(keys.begin(), keys.end());
    std::vector<ScoredState> again = evolutionary_search(space, *model, {}, skip, 12, 3, small(2));
    for (const std::string& k : keys_of(again)) EXPECT_EQ(skip.count(k), 0u);
    expect_state_matches_reference(task, best[0].state, "the best-scored state");
}

TEST_F(EvolutionarySearchTest, TheSeedAloneDecidesNotTheThreads) {
    std::vector<std::string> one =
        keys_of(evolutionary_search(space, *model, {}, {}, 8, 5, small(1)));
    std::vector<std::string> two =
        keys_of(evolutionary_search(space, *model, {}, {}, 8, 5, small(2)));
    std::vector<std::string> other =
        keys_of(evolutionary_search(space, *model, {}, {}, 8, 6, small(2)));
    EXPECT_EQ(one, two);
    EXPECT_NE(one, other);
}

// Seeds read back from a log (no sketch, no annotation rules) join the initial population and
// breed: with a population made only of seeds, every child descends from them.
TEST_F(EvolutionarySearchTest, MeasuredStatesSeedThePopulation) {
    std::vector<SearchState> seeds;
    for (const SearchState& s : space.sample(4, 17).states)
        seeds.push_back(
            SearchState{task.apply_record(s.schedule.to_json()), -1, "measured", 0, {}});
    EvolutionOptions o = small(2);
    o.population = 4;
    o.measured_share = 1;
    EvolutionStats stats;
    std::vector<ScoredState> best = evolutionary_search(space, *model, seeds, {}, 4, 1, o, &stats);
    EXPECT_EQ(stats.sample_seconds, 0);  // nothing sampled: the seeds fill the population
    EXPECT_GT(stats.children, 0);
    EXPECT_FALSE(best.empty());
}
