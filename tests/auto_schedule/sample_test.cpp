// Random samples of every workload of the suite on both targets: each is a complete schedule that
// lowered to the feature point, or a rejection counted under its reason (an InternalError would
// propagate and fail the test); the rejection rate stays under 20%; a seeded subset matches the
// reference (CPU: interpreter and JIT; GPU: SPMD interpreter with the race detector, and NVRTC).
// CI draws 24 samples per workload and target; TESSEL_SEARCH_LONG=1 draws 10,000 per target.
#include <algorithm>
#include <cstdio>
#include <optional>

#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/Lower.h"

#include "auto_schedule/SearchTestUtil.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

void sample_suite(const std::string& target) {
    std::vector<SuiteWorkload> suite = search_suite("small");
    int per_workload = search_long_mode() ? (10000 + suite.size() - 1) / suite.size() : 24;
    int checked_per_workload = search_long_mode() ? 20 : 1;
    int64_t total = 0, rejected = 0;
    for (const SuiteWorkload& w : suite) {
        SearchTask task(w.workload, w.params, Target(target));
        SearchSpace space(task);
        SampleResult r = space.sample(per_workload, 2024);
        int64_t rej = r.attempts - static_cast<int64_t>(r.states.size());
        total += r.attempts;
        rejected += rej;
        std::printf("%-6s %-22s samples=%zu rejected=%.1f%%\n", Target(target).kind_name().c_str(),
                    w.label.c_str(), r.states.size(), 100 * r.rejection_rate());
        for (const auto& [why, n] : r.rejected)
            std::printf("    %lld x %s\n", static_cast<long long>(n), why.c_str());
        EXPECT_LT(r.rejection_rate(), 0.20) << w.label;
        EXPECT_GE(r.states.size(), static_cast<size_t>(per_workload * 0.9)) << w.label;
        for (int k = 0; k < checked_per_workload && k < static_cast<int>(r.states.size()); ++k)
            expect_state_matches_reference(task, r.states[k],
                                           w.label + " sample " + std::to_string(k));
    }
    std::printf("%s: %lld attempts, %lld rejected\n", target.c_str(), static_cast<long long>(total),
                static_cast<long long>(rejected));
}

TEST(SearchSpaceSample, CpuSuiteLowersOrRejects) {
    sample_suite("llvm");
}

TEST(SearchSpaceSample, GpuSuiteLowersOrRejects) {
    sample_suite("cuda -arch=sm_90");
}

// Sample i depends only on (seed, i): one thread and two give the same states.
TEST(SearchSpaceSample, SameStatesWithOneOrTwoThreads) {
    for (const std::string& target : search_targets()) {
        SearchTask task(
            "op.conv2d_nchw",
            {int64_t(1), int64_t(4), int64_t(8), int64_t(8), int64_t(8), std::vector<int64_t>{3, 3},
             std::vector<int64_t>{1, 1}, std::vector<int64_t>{1, 1, 1, 1},
             std::vector<int64_t>{1, 1}, int64_t(1), Float(32)},
            Target(target));
        SearchSpaceOptions one, two;
        one.num_threads = 1;
        two.num_threads = 2;
        SampleResult a = SearchSpace(task, one).sample(30, 5);
        SampleResult b = SearchSpace(task, two).sample(30, 5);
        ASSERT_EQ(a.states.size(), b.states.size());
        for (size_t i = 0; i < a.states.size(); ++i)
            EXPECT_EQ(a.states[i].schedule.to_json(), b.states[i].schedule.to_json()) << i;
        // Another seed gives other states.
        SampleResult c = SearchSpace(task, one).sample(30, 6);
        int same = 0;
        for (size_t i = 0; i < std::min(a.states.size(), c.states.size()); ++i)
            same += a.states[i].schedule.to_json() == c.states[i].schedule.to_json();
        EXPECT_LT(same, 10);
    }
}

// A state prints as a Python script and its steps replay to the same schedule.
TEST(SearchSpaceSample, StatesReplayFromTheirJson) {
    SearchTask task("op.matmul",
                    {int64_t(64), int64_t(48), int64_t(32), int64_t(0), int64_t(0), Float(32)},
                    Target("llvm"));
    SearchSpace space(task);
    for (const SearchState& s : space.sample(10, 3).states) {
        Schedule again = task.apply_record(s.schedule.to_json());
        EXPECT_EQ(again.to_json(), s.schedule.to_json());
        EXPECT_NE(s.schedule.to_python().find("s.split("), std::string::npos);
        EXPECT_EQ(space.match_sketch(again), s.sketch);
    }
}

// CPU vectors: every vectorised memory access of a sampled GEMM is a unit-stride ramp (or a
// broadcast), at most the vector unit's 64 bytes x 4 registers wide (64 float lanes on
// AVX-512), some wider than the old cap of 16; the innermost j tile is drawn first, so a
// vector-wide one (>= 16) is common rather than rare.
TEST(SearchSpaceSample, CpuVectorsAreUnitStrideAndUpToFourRegisters) {
    SearchTask task("op.matmul",
                    {int64_t(256), int64_t(256), int64_t(256), int64_t(0), int64_t(0), Float(32)},
                    Target("llvm -mcpu=skylake-avx512"));
    SearchSpace space(task);
    SampleResult r = space.sample(120, 11);
    ASSERT_GE(r.states.size(), 100u);
    int widest = 0, wide_j = 0, vectorised = 0;
    for (const SearchState& st : r.states) {
        LoweredFunc f = lower(st.schedule, task.dag().args(), task.target());
        int lanes = 0;
        post_order_visit(f.body, [&](const IRNode* n) {
            const Expr* index = nullptr;
            if (n->node_type == IRNodeType::Load) index = &static_cast<const Load*>(n)->index;
            if (n->node_type == IRNodeType::Store) index = &static_cast<const Store*>(n)->index;
            if (!index || index->type().lanes == 1) return;
            lanes = std::max<int>(lanes, index->type().lanes);
            const Ramp* ramp = index->as<Ramp>();
            EXPECT_TRUE(ramp || index->as<Broadcast>()) << st.schedule.to_python();
            if (ramp) {
                EXPECT_EQ(as_const_int(ramp->stride), std::optional<int64_t>(1));
            }
        });
        widest = std::max(widest, lanes);
        vectorised += lanes > 1;
        // The j axis's innermost split factor: the last tile group of the output's stage.
        std::string py = st.schedule.to_python();
        for (int w : {16, 32, 64})
            if (py.find("factor=" + std::to_string(w) + ")  # matmul: i1\n") != std::string::npos ||
                py.find("factor=" + std::to_string(w) + ")  # matmul.local: i1\n") !=
                    std::string::npos)
                ++wide_j;
    }
    std::printf("%zu states: %d vectorised, widest %d lanes, %d with j's innermost tile >= 16\n",
                r.states.size(), vectorised, widest, wide_j);
    EXPECT_LE(widest, 64);
    EXPECT_GT(widest, 16);
    EXPECT_GT(vectorised, static_cast<int>(r.states.size()) / 3);
    EXPECT_GT(wide_j, static_cast<int>(r.states.size()) / 4);
}

}  // namespace
