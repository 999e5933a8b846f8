// Mutation and crossover over the suite on both targets: every child is a complete schedule that
// lowers (checked as a sample is), children differ from their parents, a subset matches the
// reference, and the share of legal crossover children is printed. CI makes 8 children of each
// kind per workload and target; TESSEL_SEARCH_LONG=1 makes 2,000 of each per target.
#include <cstdio>
#include <map>

#include "auto_schedule/SearchTestUtil.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

void evolve_suite(const std::string& target) {
    std::vector<SuiteWorkload> suite = search_suite("small");
    int per_workload = search_long_mode() ? (2000 + suite.size() - 1) / suite.size() : 8;
    int64_t cross_tried = 0, cross_legal = 0, mutated = 0, mutate_tried = 0, immutable = 0;
    std::map<std::string, int> kinds;
    for (const SuiteWorkload& w : suite) {
        SearchTask task(w.workload, w.params, Target(target));
        SearchSpace space(task);
        std::vector<SearchState> parents = space.sample(2 * per_workload, 77).states;
        ASSERT_GE(parents.size(), 2u) << w.label;
        std::mt19937_64 rng(9);
        for (int k = 0; k < per_workload; ++k) {
            const SearchState& p = parents[k % parents.size()];
            if (space.mutations(p).empty()) {
                ++immutable;  // nothing to mutate (no tiled loop, no pragma, ...)
                EXPECT_FALSE(space.mutate(p, rng)) << w.label;
            } else if (++mutate_tried; auto m = space.mutate(p, rng)) {
                ++mutated;
                ++kinds[m->origin];
                if (k < 1) expect_state_matches_reference(task, *m, w.label + " " + m->origin);
            }
            // Crossover needs parents of one sketch.
            const SearchState* q = nullptr;
            for (size_t j = k + 1; j < parents.size() && !q; ++j)
                if (parents[j].sketch == p.sketch) q = &parents[j];
            if (!q) continue;
            ++cross_tried;
            if (auto c = space.crossover(p, *q, rng)) {
                ++cross_legal;
                EXPECT_EQ(c->origin, "crossover");
                if (k < 1) expect_state_matches_reference(task, *c, w.label + " crossover");
            }
        }
    }
    std::printf("%s: mutation %lld of %lld legal (%lld states with nothing to mutate);",
                target.c_str(), static_cast<long long>(mutated),
                static_cast<long long>(mutate_tried), static_cast<long long>(immutable));
    for (const auto& [kind, n] : kinds) std::printf(" %s=%d", kind.c_str(), n);
    std::printf("\n%s: crossover %lld of %lld children legal (%.1f%%)\n", target.c_str(),
                static_cast<long long>(cross_legal), static_cast<long long>(cross_tried),
                cross_tried ? 100.0 * cross_legal / cross_tried : 0.0);
    // A state with something to mutate rarely has no legal mutation within the tries (a refused
    // vector width after a factor moved inwards, a factor that would pass the innermost limit).
    EXPECT_GE(mutated, mutate_tried * 9 / 10);
    EXPECT_GT(cross_legal, 0);
}

TEST(SearchSpaceEvolve, CpuMutationAndCrossover) {
    evolve_suite("llvm");
}

TEST(SearchSpaceEvolve, GpuMutationAndCrossover) {
    evolve_suite("cuda -arch=sm_90");
}

// A tile-size mutation moves a factor between levels: the extent's product is kept and the
// follow splits of the fused consumer follow.
TEST(SearchSpaceEvolve, TileMutationKeepsTheExtent) {
    SearchTask task("op.matmul",
                    {int64_t(64), int64_t(64), int64_t(64), int64_t(0), int64_t(0), Float(32)},
                    Target("llvm"));
    SearchSpace space(task);
    std::mt19937_64 rng(3);
    int changed = 0;
    for (const SearchState& s : space.sample(20, 1).states) {
        auto m = space.mutate(s, rng);
        if (!m || m->origin != "mutate_tile_size") continue;
        changed += m->schedule.to_json() != s.schedule.to_json();
        for (const TileGroup& g : space.sketches()[m->sketch].tiles) {
            int64_t product = 1;
            for (int step : g.steps)
                product *= std::get<SplitStep>(m->schedule.steps()[step]).factor;
            EXPECT_EQ(g.extent % product, 0);
        }
    }
    EXPECT_GT(changed, 5);
}

// Parents of different sketches have no child.
TEST(SearchSpaceEvolve, CrossoverNeedsOneSketch) {
    SearchTask task("op.matmul",
                    {int64_t(64), int64_t(64), int64_t(64), int64_t(0), int64_t(0), Float(32)},
                    Target("llvm"));
    SearchSpace space(task);
    std::vector<SearchState> s = space.sample(20, 2).states;
    std::mt19937_64 rng(1);
    for (size_t i = 1; i < s.size(); ++i)
        if (s[i].sketch != s[0].sketch) {
            EXPECT_FALSE(space.crossover(s[0], s[i], rng).has_value());
            return;
        }
    FAIL() << "all samples came from one sketch";
}

}  // namespace
