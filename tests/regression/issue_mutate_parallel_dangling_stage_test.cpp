// Regression test: the parallel mutation (src/auto_schedule/space/Mutate.cpp) read the stage it
// edits through a reference into a temporary schedule that was already destroyed, and crashed
// (SIGSEGV) in the tuner's evolutionary search of a 1024^3 GEMM. Every parallel mutation of many
// states must give a legal child that fuses a different number of outer loops into its parallel
// loop.
#include <gtest/gtest.h>

#include "tessel/auto_schedule/space/SearchSpace.h"

using namespace tessel;

namespace {

// How many loops the parallel loop of the root stage fuses (1 when it is not fused).
int parallel_fused_loops(const Schedule& s, int from_step) {
    const std::vector<Step>& steps = s.steps();
    for (size_t i = from_step; i < steps.size(); ++i) {
        const auto* a = std::get_if<AnnotateStep>(&steps[i]);
        if (!a || a->annotation != IterAnnotation::Parallel || a->iter != 0) continue;
        const auto* f = i > 0 ? std::get_if<FuseStep>(&steps[i - 1]) : nullptr;
        return f && f->stage == a->stage ? static_cast<int>(f->iters.size()) : 1;
    }
    return 0;
}

}  // namespace

TEST(Regression, MutateParallelDanglingStage) {
    SearchTask task("matmul", {int64_t(256), int64_t(256), int64_t(256), Float(32)},
                    Target("llvm -num-cores=2"));
    SearchSpace space(task);
    std::vector<SearchState> states = space.sample(64, 3).states;
    ASSERT_FALSE(states.empty());
    std::mt19937_64 rng(11);
    int parallel = 0;
    for (int k = 0; k < 4000 && parallel < 12; ++k) {
        const SearchState& parent = states[k % states.size()];
        std::optional<SearchState> child = space.mutate(parent, rng);
        if (!child || child->origin != "mutate_parallel") continue;
        ++parallel;
        EXPECT_EQ(space.check(child->schedule), "");
        EXPECT_NE(parallel_fused_loops(child->schedule, child->sketch_steps),
                  parallel_fused_loops(parent.schedule, parent.sketch_steps))
            << child->schedule.to_python();
    }
    EXPECT_GT(parallel, 0);
}
