// The CPU dot-product sketch (SketchCpuDot.cpp, AnnotateCpuDot.cpp): a uint8 x int8 GEMM on a
// CPU with VNNI gets the dot sketch alone (vpdpbusd through tensorize, B packed for it), and
// bfloat16 on AVX512-BF16; a CPU without the unit, other types and shapes the instruction cannot
// tile keep the plain rules; random states and their mutants compute the GEMM exactly (loop
// interpreter and JIT against the reference interpreter); a record replays the state.
#include <algorithm>
#include <random>
#include <set>

#include "auto_schedule/SearchTestUtil.h"
#include "tessel/op/Matmul.h"

using namespace tessel;
using namespace tessel::testing;

// A namespace of its own: the test files of this binary are compiled together (unity build).
namespace cpu_dot_sketch_test {

constexpr const char* kVnni = "llvm -mcpu=cascadelake -num-cores=2";       // AVX512-VNNI
constexpr const char* kNoVnni = "llvm -mcpu=skylake-avx512 -num-cores=2";  // AVX-512, no VNNI
constexpr const char* kAvxVnni = "llvm -mcpu=alderlake -num-cores=2";      // AVX-VNNI (256-bit)
constexpr const char* kBf16 = "llvm -mcpu=sapphirerapids -num-cores=2";    // AVX512-BF16

// C = A (m, k) x B (k, n), or B given as (n, k) (dense), of the given types.
SearchTask gemm(int64_t m, int64_t n, int64_t k, const std::string& target, Type a = UInt(8),
                Type b = Int(8), bool dense = false, bool constant_b = false) {
    Tensor A = placeholder({m, k}, a, "a");
    Tensor B =
        dense ? placeholder({n, k}, b, "b", constant_b) : placeholder({k, n}, b, "b", constant_b);
    Tensor C = dense ? op::dense(A, B) : op::matmul(A, B);
    return SearchTask(TensorDAG{{A, B}, {C}}, Target(target));
}

bool is_cpu_dot(const Sketch& sk) {
    return std::any_of(sk.trace.begin(), sk.trace.end(), [](const std::string& t) {
        return t.find(": multi_level_tiling_cpu_dot") != std::string::npos;
    });
}

int cpu_dot_sketches(const SearchSpace& space) {
    return static_cast<int>(
        std::count_if(space.sketches().begin(), space.sketches().end(), is_cpu_dot));
}

// Random states of sketch 0, each drawn until it is complete.
std::vector<SearchState> samples(const SearchSpace& space, int count, uint64_t seed) {
    std::vector<SearchState> out;
    std::mt19937_64 rng(seed);
    std::string why;
    for (int tries = 0; tries < 8 * count && static_cast<int>(out.size()) < count; ++tries)
        if (std::optional<SearchState> s = space.annotate(0, rng, &why)) out.push_back(*s);
    EXPECT_EQ(static_cast<int>(out.size()), count) << "seed " << seed << ": " << why;
    return out;
}

// The loop interpreter and the JIT against the reference interpreter (int32 results: exact).
void expect_exact(const SearchState& s, int64_t k, const std::string& what) {
    SCOPED_TRACE(what + "\n" + s.schedule.to_python());
    expect_matches_reference(s.schedule, k);
    expect_jit_matches_reference(s.schedule, k);
}

TEST(CpuDotSketch, U8S8GemmOnVnniGetsTheDotSketchAlone) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU names imply features only with LLVM";
    SearchSpace space(gemm(64, 64, 64, kVnni));
    ASSERT_EQ(space.sketches().size(), 1u);
    const Sketch& sk = space.sketches()[0];
    EXPECT_EQ(sk.trace, std::vector<std::string>{"matmul.local: multi_level_tiling_cpu_dot"});
    std::vector<SketchStageKind> kinds;
    for (const SketchStage& st : sk.stages) kinds.push_back(st.kind);
    using K = SketchStageKind;
    // a, b, b.global (the pack), matmul.local (the accumulator), matmul.
    EXPECT_EQ(kinds, (std::vector<K>{K::Placeholder, K::Placeholder, K::CpuDotPack, K::CpuDot,
                                     K::CpuDotOutput}));
    EXPECT_EQ(sk.tiles.size(), 2u);  // rows (tiles, rows), columns (blocks, panels, vectors)
    EXPECT_NE(sk.schedule.to_python().find("dot_16x4_u8s8"), std::string::npos);
    // dense (B as (n, k)) too, and AVX-VNNI's 256-bit instruction.
    SearchSpace dense(gemm(32, 48, 16, kVnni, UInt(8), Int(8), true));
    EXPECT_EQ(cpu_dot_sketches(dense), 1);
    SearchSpace avx(gemm(32, 48, 16, kAvxVnni));
    ASSERT_EQ(cpu_dot_sketches(avx), 1);
    EXPECT_NE(avx.sketches()[0].schedule.to_python().find("dot_8x4_u8s8"), std::string::npos);
    // bfloat16 with float32 accumulation on AVX512-BF16.
    Tensor A = placeholder({32, 16}, BFloat(16), "a"), B = placeholder({16, 32}, BFloat(16), "b");
    Tensor C = op::matmul(A, B, false, false, Float(32));
    SearchSpace bf(SearchTask(TensorDAG{{A, B}, {C}}, Target(kBf16)));
    ASSERT_EQ(cpu_dot_sketches(bf), 1);
    EXPECT_NE(bf.sketches()[0].schedule.to_python().find("dot_16x2_bf16"), std::string::npos);
}

TEST(CpuDotSketch, TheRuleIsTheTargetsAndTheInstructionsShapes) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU names imply features only with LLVM";
    auto has_rule = [](const char* target) {
        std::vector<SketchRule> rules = builtin_sketch_rules(Target(target));
        return std::any_of(rules.begin(), rules.end(), [](const SketchRule& r) {
            return r.name == "multi_level_tiling_cpu_dot";
        });
    };
    EXPECT_TRUE(has_rule(kVnni));
    EXPECT_TRUE(has_rule(kAvxVnni));
    EXPECT_FALSE(has_rule(kNoVnni));
    EXPECT_FALSE(has_rule("cuda -arch=sm_90"));
    // No VNNI: the plain rules (Ansor's three GEMM sketches).
    SearchSpace plain(gemm(64, 64, 64, kNoVnni));
    EXPECT_EQ(cpu_dot_sketches(plain), 0);
    EXPECT_EQ(plain.sketches().size(), 3u);
    // int8 x int8 is not the instruction's product (op::matmul's s8 x s8 through the unit is the
    // shifted product of op/Matmul.h); float32 neither; nor N not a multiple of the lanes or K
    // of the group (whole instructions only).
    EXPECT_EQ(cpu_dot_sketches(SearchSpace(gemm(64, 64, 64, kVnni, Int(8), Int(8)))), 0);
    EXPECT_EQ(cpu_dot_sketches(SearchSpace(gemm(64, 64, 64, kVnni, Float(32), Float(32)))), 0);
    EXPECT_EQ(cpu_dot_sketches(SearchSpace(gemm(64, 40, 64, kVnni))), 0);
    EXPECT_EQ(cpu_dot_sketches(SearchSpace(gemm(64, 64, 30, kVnni))), 0);
}

TEST(CpuDotSketch, SamplesComputeTheGemmExactly) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU names imply features only with LLVM";
    // Odd rows and reduction: 36 rows (tiles of 1, 2, 3, 4, 6, 9 or 12), 48 columns (3 vectors),
    // K = 20 (5 groups); and dense's B layout.
    for (bool dense : {false, true}) {
        SearchSpace space(gemm(36, 48, 20, kVnni, UInt(8), Int(8), dense));
        ASSERT_EQ(cpu_dot_sketches(space), 1);
        std::set<std::string> tiles;
        for (uint64_t seed : {1, 2, 3}) {
            std::vector<SearchState> states = samples(space, 2, seed);
            for (size_t i = 0; i < states.size(); ++i) {
                expect_exact(states[i], 20,
                             std::string(dense ? "dense" : "matmul") + " seed " +
                                 std::to_string(seed) + " sample " + std::to_string(i));
                tiles.insert(states[i].schedule.to_json());
            }
        }
        EXPECT_GE(tiles.size(), 3u);  // the samples differ
    }
}

TEST(CpuDotSketch, ParallelChoicesAndRegisterCheck) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU names imply features only with LLVM";
    SearchSpace space(gemm(64, 128, 32, kVnni));
    SampleResult r = space.sample(32, 3);
    ASSERT_GE(r.states.size(), 24u);
    std::set<int> parallel_at;  // the output's parallel loop: 0 blocks, 1 row tiles
    for (const SearchState& s : r.states) {
        const Stage& out = s.schedule.stage(static_cast<int>(s.schedule.stages().size()) - 1);
        for (size_t pos = 0; pos < out.leaf.size(); ++pos)
            if (out.iters[out.leaf[pos]].annotation == IterAnnotation::Parallel)
                parallel_at.insert(static_cast<int>(pos));
        // Accumulators, B's vectors and A's broadcast fit AVX-512's 32 registers.
        std::vector<Expr> row = s.schedule.infer_extents().back();
        int64_t rows = as_const_int(row[3]).value(), vectors = as_const_int(row[4]).value();
        EXPECT_LE(rows * vectors + vectors + 1, 32);
    }
    EXPECT_EQ(parallel_at, (std::set<int>{0, 1}));
}

TEST(CpuDotSketch, MutantsStayValidAndRecordsReplay) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU names imply features only with LLVM";
    SearchTask task = gemm(48, 64, 24, kVnni);
    SearchSpace space(task);
    std::vector<SearchState> states = samples(space, 2, 7);
    ASSERT_FALSE(states.empty());
    std::vector<std::string> names = space.mutations(states[0]);
    EXPECT_NE(std::find(names.begin(), names.end(), "mutate_tile_size"), names.end());
    std::mt19937_64 rng(3);
    int made = 0;
    for (int i = 0; i < 16; ++i) {
        std::optional<SearchState> child = space.mutate(states[i % states.size()], rng);
        if (!child) continue;
        ++made;
        EXPECT_TRUE(space.check(child->schedule).empty());
        EXPECT_EQ(space.match_sketch(child->schedule), 0);
        if (made <= 3)
            expect_exact(*child, 24, "mutant " + std::to_string(i) + " " + child->origin);
    }
    EXPECT_GE(made, 8);
    // A record is the step list: it replays to the same schedule.
    Schedule again = task.apply_record(states[0].schedule.to_json());
    EXPECT_EQ(again.to_json(), states[0].schedule.to_json());
}

// Layout rewrite: with B constant the sketch packs it once (pre_transform) in the instruction's
// layout; samples and mutants compute the GEMM exactly (the transform, then the kernel), for
// matmul's and dense's B, uint8 x int8 and bfloat16.
TEST(CpuDotSketch, AConstantBIsPackedOnce) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU names imply features only with LLVM";
    for (bool dense : {false, true}) {
        SearchTask task = gemm(36, 48, 20, kVnni, UInt(8), Int(8), dense, true);
        SearchSpace space(task);
        ASSERT_EQ(cpu_dot_sketches(space), 1);
        EXPECT_TRUE(has_pre_transform(space.sketches()[0].schedule));
        std::vector<SearchState> states = samples(space, 2, 5);
        for (size_t i = 0; i < states.size(); ++i) {
            EXPECT_TRUE(has_pre_transform(states[i].schedule));
            expect_exact(states[i], 20,
                         std::string(dense ? "dense" : "matmul") + " sample " + std::to_string(i));
        }
        std::mt19937_64 rng(11);
        int checked = 0;
        for (int i = 0; i < 12 && checked < 2; ++i) {
            std::optional<SearchState> child = space.mutate(states[i % states.size()], rng);
            if (!child) continue;
            ++checked;
            expect_exact(*child, 20, "mutant " + child->origin);
        }
        EXPECT_EQ(task.apply_record(states[0].schedule.to_json()).to_json(),
                  states[0].schedule.to_json());
    }
    Tensor A = placeholder({32, 16}, BFloat(16), "a");
    Tensor B = placeholder({16, 32}, BFloat(16), "b", /*constant=*/true);
    Tensor C = op::matmul(A, B, false, false, Float(32));
    SearchSpace bf(SearchTask(TensorDAG{{A, B}, {C}}, Target(kBf16)));
    ASSERT_EQ(cpu_dot_sketches(bf), 1);
    std::vector<SearchState> states = samples(bf, 1, 2);
    ASSERT_FALSE(states.empty());
    EXPECT_TRUE(has_pre_transform(states[0].schedule));
    expect_matches_reference(states[0].schedule, 16);
}

}  // namespace cpu_dot_sketch_test
