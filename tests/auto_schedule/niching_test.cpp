// Niching in the evolutionary search (EvolutionOptions::niche_share, SearchSpace::state_class) on
// a GPU GEMM: a state's class is its sketch and the pipelining of its shared fetches; with a
// model that prefers the leading class, niching still returns the other classes' best-scored
// states, a class at a time in turn, and without it the search returns what it did before.
#include <map>
#include <set>

#include "auto_schedule/SearchTestUtil.h"
#include "tessel/Error.h"
#include "tessel/auto_schedule/EvolutionarySearch.h"
#include "tessel/auto_schedule/Features.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

SearchSpaceOptions unlowered() {
    SearchSpaceOptions o;
    o.lower = false;
    return o;
}

EvolutionOptions small(double niche_share) {
    EvolutionOptions o;
    o.population = 128;
    o.generations = 2;
    o.num_threads = 2;
    o.niche_share = niche_share;
    return o;
}

struct NichingTest : ::testing::Test {
    SearchTask task{
        "matmul", {int64_t(128), int64_t(128), int64_t(64), Float(32)}, Target("cuda -arch=sm_90")};
    SearchSpace space{task, unlowered()};
    std::vector<SearchState> samples;
    std::string leading;  // the class the model is trained to prefer
    std::optional<CostModel> model;

    void SetUp() override {
        if (!CostModel::available()) GTEST_SKIP() << "built without XGBoost";
        samples = space.sample(96, 7).states;
        ASSERT_FALSE(samples.empty());
        // The most common class that pipelines its fetches leads: the model learns that its
        // states are ten times faster than any other's.
        std::map<std::string, int> count;
        for (const SearchState& s : samples) ++count[space.state_class(s)];
        for (const auto& [c, k] : count)
            if (c.find("pipeline(") != std::string::npos && (leading.empty() || k > count[leading]))
                leading = c;
        ASSERT_FALSE(leading.empty()) << "no pipelined sample";
        std::vector<MeasuredProgram> programs;
        for (const SearchState& s : samples) {
            MeasuredProgram p;
            p.task_key = task.key();
            p.features = extract_features(task, s.schedule);
            p.costs = {space.state_class(s) == leading ? 1e-3 : 1e-2};
            programs.push_back(std::move(p));
        }
        model.emplace(CostModelOptions{.seed = 1, .min_programs = 16, .num_rounds = 30});
        model->train(programs);
        ASSERT_TRUE(model->trained());
    }

    // The measured states seeding a search: the leading class's first, then every other's.
    std::vector<SearchState> seeds() const {
        std::vector<SearchState> lead, other;
        for (const SearchState& s : samples)
            (space.state_class(s) == leading ? lead : other).push_back(s);
        lead.insert(lead.end(), other.begin(), other.end());
        return lead;
    }
};

}  // namespace

TEST_F(NichingTest, ClassIsTheSketchAndThePipeliningOfTheFetches) {
    std::set<std::string> pipelinings;
    for (const SearchState& s : samples) {
        std::string c = space.state_class(s);
        EXPECT_EQ(c.rfind("sketch " + std::to_string(s.sketch), 0), 0u) << c;
        for (const char* p : {"none", "double_buffer", "pipeline("})
            if (c.find(std::string(" ") + p) != std::string::npos) pipelinings.insert(p);
    }
    EXPECT_EQ(pipelinings.size(), 3u);  // sm_90 draws none, double buffering and cp.async

    // A pipelining mutant differs in class from its parent and in nothing else.
    std::mt19937_64 rng(3);
    int mutants = 0;
    for (int t = 0; t < 400 && mutants < 5; ++t) {
        const SearchState& parent = samples[static_cast<size_t>(t) % samples.size()];
        std::optional<SearchState> m = space.mutate(parent, rng);
        if (!m || m->origin != "mutate_pipelining") continue;
        ++mutants;
        EXPECT_NE(space.state_class(*m), space.state_class(parent));
        EXPECT_EQ(m->sketch, parent.sketch);
    }
    EXPECT_GT(mutants, 0);

    // Read back from a log (no sketch known), a state keeps its class; a CPU state's class is
    // its sketch.
    SearchState read{task.apply_record(samples[0].schedule.to_json()), -1, "measured", 0, {}};
    EXPECT_EQ(space.state_class(read), space.state_class(samples[0]));
    SearchTask cpu{
        "matmul", {int64_t(64), int64_t(64), int64_t(64), Float(32)}, Target("llvm -num-cores=2")};
    SearchSpace cpu_space{cpu, unlowered()};
    SearchState c = cpu_space.sample(1, 1).states.at(0);
    EXPECT_EQ(cpu_space.state_class(c), "sketch " + std::to_string(c.sketch));
}

TEST_F(NichingTest, OtherClassesKeepTheirShareInTurn) {
    const int n = 16;
    auto others = [&](const std::vector<ScoredState>& states) {
        std::vector<std::string> out;
        for (const ScoredState& s : states)
            if (space.state_class(s.state) != leading) out.push_back(space.state_class(s.state));
        return out;
    };
    std::vector<ScoredState> plain =
        evolutionary_search(space, *model, seeds(), {}, n, 5, small(0));
    std::vector<ScoredState> niched =
        evolutionary_search(space, *model, seeds(), {}, n, 5, small(0.25));
    ASSERT_EQ(niched.size(), static_cast<size_t>(n));
    std::set<std::string> keys;
    for (const ScoredState& s : niched) keys.insert(state_key(s.state.schedule));
    EXPECT_EQ(keys.size(), static_cast<size_t>(n));

    // The model ranks the leading class first: without niching it fills (nearly) the whole
    // batch; with niching a quarter of the batch, the last four, are of other classes, and
    // those four come from more than one class (in turn).
    std::vector<std::string> plain_others = others(plain), niched_others = others(niched);
    EXPECT_LT(plain_others.size(), 4u);
    EXPECT_GE(niched_others.size(), 4u);
    std::set<std::string> tail;
    for (int i = n - 4; i < n; ++i) {
        std::string c = space.state_class(niched[static_cast<size_t>(i)].state);
        EXPECT_NE(c, leading);
        tail.insert(c);
    }
    EXPECT_GE(tail.size(), 2u);
    // The leading part is still best first.
    for (int i = 1; i < n - 4; ++i)
        EXPECT_GE(niched[static_cast<size_t>(i) - 1].score, niched[static_cast<size_t>(i)].score);
}

TEST_F(NichingTest, ShareOutOfRangeIsAnError) {
    EXPECT_THROW(evolutionary_search(space, *model, {}, {}, 4, 1, small(1.5)), RuntimeError);
    EXPECT_THROW(evolutionary_search(space, *model, {}, {}, 4, 1, small(-0.1)), RuntimeError);
}
