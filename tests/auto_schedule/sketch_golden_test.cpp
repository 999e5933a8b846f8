// The sketches of every workload of the search suite on both targets: their count and the rules
// each applied, against a golden list. A change to a rule that changes a sketch shows here;
// update the list when the change is meant (the failure prints the new one).
#include <map>
#include <sstream>

#include "auto_schedule/SearchTestUtil.h"
#include "tessel/op/Matmul.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

std::string traces(const std::string& workload, const WorkloadParams& params,
                   const std::string& target) {
    std::ostringstream os;
    for (const Sketch& sk : generate_sketches(SearchTask(workload, params, Target(target)))) {
        os << "[";
        for (size_t i = 0; i < sk.trace.size(); ++i) os << (i ? "; " : "") << sk.trace[i];
        os << "]";
    }
    return os.str();
}

// label -> {CPU sketches, GPU sketches}, each sketch's trace in brackets.
const std::map<std::string, std::pair<std::string, std::string>>& golden() {
    static const std::map<std::string, std::pair<std::string, std::string>> g = {
#include "sketch_golden.inc"
    };
    return g;
}

TEST(SketchGolden, SuiteSketchesAndTheirRules) {
    std::ostringstream now;
    bool same = true;
    for (const SuiteWorkload& w : search_suite("small")) {
        std::string cpu = traces(w.workload, w.params, "llvm");
        std::string gpu = traces(w.workload, w.params, "cuda -arch=sm_90");
        now << "        {\"" << w.label << "\",\n         {\"" << cpu << "\",\n          \"" << gpu
            << "\"}},\n";
        auto it = golden().find(w.label);
        same = same && it != golden().end() && it->second.first == cpu && it->second.second == gpu;
    }
    EXPECT_TRUE(same) << "the sketches changed; the new tests/auto_schedule/sketch_golden.inc:\n"
                      << now.str();
}

// Ansor's counts: a GEMM has 3 CPU sketches (tiled; cache write fused at level 1 or 2), one GPU
// sketch, and here a second one with register read caches (cache_read_local); every sketch of every
// suite workload replays from its JSON.
TEST(SketchGolden, GemmCountsAndReplay) {
    SearchTask cpu("op.matmul",
                   {int64_t(64), int64_t(64), int64_t(64), int64_t(0), int64_t(0), Float(32)},
                   Target("llvm"));
    EXPECT_EQ(generate_sketches(cpu).size(), 3u);
    SearchTask gpu("op.matmul", cpu.params(), Target("cuda -arch=sm_90"));
    EXPECT_EQ(generate_sketches(gpu).size(), 2u);
    for (const SuiteWorkload& w : search_suite("small"))
        for (const std::string& t : search_targets()) {
            SearchTask task(w.workload, w.params, Target(t));
            for (const Sketch& sk : generate_sketches(task))
                EXPECT_EQ(task.apply_record(sk.schedule.to_json()).to_json(),
                          sk.schedule.to_json());
        }
}

// A user rule placed before the built-in ones: here it inlines nothing and tiles every stage
// with reuse by a custom structure.
TEST(SketchGolden, UserRuleRunsFirst) {
    SearchTask task("op.matmul",
                    {int64_t(64), int64_t(64), int64_t(64), int64_t(0), int64_t(0), Float(32)},
                    Target("llvm"));
    SketchOptions options;
    options.rules.push_back(SketchRule{"my_tiling",
                                       [](const SketchContext& ctx, const Sketch& sk, int st) {
                                           int i = ctx.dag_index(sk.schedule, st);
                                           return i >= 0 && ctx.dag.needs_multi_level_tiling(i)
                                                      ? RuleCondition::ApplyAndSkipRest
                                                      : RuleCondition::Skip;
                                       },
                                       [](const SketchContext&, const Sketch& in, int st) {
                                           Sketch sk = in;
                                           tile_stage(sk, st, "SRS", 16);
                                           sk.trace.push_back("my_tiling");
                                           return std::vector<std::pair<Sketch, int>>{{sk, st - 1}};
                                       }});
    std::vector<Sketch> sketches = generate_sketches(task, options);
    ASSERT_EQ(sketches.size(), 1u);
    EXPECT_EQ(sketches[0].trace, std::vector<std::string>{"my_tiling"});
    SearchSpaceOptions so;
    so.sketch = options;
    SampleResult r = SearchSpace(task, so).sample(4, 1);
    for (const auto& [why, n] : r.rejected) ADD_FAILURE() << n << " x " << why;
    ASSERT_FALSE(r.states.empty());
    expect_state_matches_reference(task, r.states[0], "user rule");
}

// The CPU dot-product rule (multi_level_tiling_cpu_dot) on targets named by their CPU, so that the
// traces do not depend on the machine: uint8 x int8 matmul and dense and int8 x int8 (built for
// the target: the shifted product, op/Matmul.h) on VNNI, bfloat16 on AVX512-BF16, and the plain
// rules on a CPU without VNNI.
TEST(SketchGolden, CpuDotRuleOnTargetsWithTheUnit) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU names imply features only with LLVM";
    const std::string vnni = "llvm -mcpu=cascadelake -num-cores=2";
    const std::string bf16 = "llvm -mcpu=cooperlake -num-cores=2";
    const std::string none = "llvm -mcpu=skylake-avx512 -num-cores=2";
    auto dag_traces = [](const Tensor& out, const std::string& target) {
        std::ostringstream os;
        for (const Sketch& sk :
             generate_sketches(SearchTask(make_tensor_dag({out}), Target(target)))) {
            os << "[";
            for (size_t i = 0; i < sk.trace.size(); ++i) os << (i ? "; " : "") << sk.trace[i];
            os << "]";
        }
        return os.str();
    };
    Tensor a = placeholder({64, 64}, UInt(8), "a"), b = placeholder({64, 64}, Int(8), "b");
    Tensor sa = placeholder({64, 64}, Int(8), "sa");
    Tensor h = placeholder({64, 64}, BFloat(16), "h"), g = placeholder({64, 64}, BFloat(16), "g");
    const std::string dot = "[matmul.local: multi_level_tiling_cpu_dot]";
    EXPECT_EQ(dag_traces(op::matmul(a, b), vnni), dot);
    EXPECT_EQ(dag_traces(op::dense(a, b), vnni), "[dense.local: multi_level_tiling_cpu_dot]");
    EXPECT_EQ(
        dag_traces(op::matmul(sa, b, false, false, std::nullopt, "matmul", Target(vnni)), vnni),
        "[matmul.dot: multi_level_tiling_cpu_dot]");
    EXPECT_EQ(dag_traces(op::matmul(h, g, false, false, Float(32)), bf16), dot);
    // bfloat16 to bfloat16: the product is "matmul.acc", its cast the epilogue.
    EXPECT_EQ(dag_traces(op::matmul(h, g), bf16), "[matmul.acc: multi_level_tiling_cpu_dot]");
    const std::string plain =
        "[matmul: multi_level_tiling][matmul: cache_write; matmul.local: "
        "multi_level_tiling_with_fusion(1)][matmul: cache_write; matmul.local: "
        "multi_level_tiling_with_fusion(2)]";
    EXPECT_EQ(dag_traces(op::matmul(a, b), none), plain);
    EXPECT_EQ(dag_traces(op::matmul(h, g, false, false, Float(32)), vnni), plain);
}

TEST(SketchGolden, BadTilingStructureIsAScheduleError) {
    SearchTask task("op.matmul",
                    {int64_t(8), int64_t(8), int64_t(8), int64_t(0), int64_t(0), Float(32)},
                    Target("llvm"));
    SketchOptions options;
    options.cpu_tiling = "SSXR";
    EXPECT_THROW(generate_sketches(task, options), ScheduleError);
    options.cpu_tiling = "SSS";
    EXPECT_THROW(generate_sketches(task, options), ScheduleError);
}

}  // namespace
