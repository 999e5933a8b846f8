// The CPU blocked-tile sketch (SketchBlocked.cpp, AnnotateBlocked.cpp): conv2d_nchwc (blocked
// activations) gets the default's three loop orders as sketches and nothing else, its epilogue
// fused; NCHW convs, pools and blocks that are not whole vectors keep the other rules; random
// states and their mutants compute the convolution (loop interpreter and JIT against the
// reference interpreter); tiles fit the registers; a record replays the state.
#include <algorithm>
#include <random>
#include <set>

#include "auto_schedule/SearchTestUtil.h"
#include "tessel/op/Conv.h"
#include "tessel/op/Elementwise.h"
#include "tessel/op/Pool.h"

using namespace tessel;
using namespace tessel::testing;

// A namespace of its own: the test files of this binary are compiled together (unity build).
namespace blocked_sketch_test {

constexpr const char* kAvx512 = "llvm -mcpu=skylake-avx512 -num-cores=2";  // 16 float lanes
constexpr const char* kAvx2 = "llvm -mcpu=haswell -num-cores=2";           // 8 float lanes

// conv2d_nchwc of x (1, c / cb, h, w, cb) by a (k / kb, c / cb, r, r, cb, kb) weight, padding
// r / 2, ReLU after it when `relu`.
SearchTask blocked_conv(int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t stride,
                        const std::string& target, int64_t cb = 16, int64_t kb = 16,
                        bool relu = false) {
    Tensor x = placeholder({1, c / cb, h, w, cb}, Float(32), "x");
    Tensor wt = placeholder({k / kb, c / cb, r, r, cb, kb}, Float(32), "w");
    Tensor y = op::conv2d_nchwc(x, wt, op::conv_params(stride, r / 2));
    if (relu) y = op::relu(y);
    return SearchTask(TensorDAG{{x, wt}, {y}}, Target(target));
}

std::vector<std::string> blocked_traces(const SearchSpace& space) {
    std::vector<std::string> out;
    for (const Sketch& sk : space.sketches())
        for (const std::string& t : sk.trace)
            if (t.find("multi_level_tiling_blocked") != std::string::npos) out.push_back(t);
    return out;
}

// Random states of sketch `sketch`, each drawn until it is complete.
std::vector<SearchState> samples(const SearchSpace& space, int sketch, int count, uint64_t seed) {
    std::vector<SearchState> out;
    std::mt19937_64 rng(seed);
    std::string why;
    for (int tries = 0; tries < 16 * count && static_cast<int>(out.size()) < count; ++tries)
        if (std::optional<SearchState> s = space.annotate(sketch, rng, &why)) out.push_back(*s);
    EXPECT_EQ(static_cast<int>(out.size()), count) << "seed " << seed << ": " << why;
    return out;
}

TEST(BlockedSketch, BlockedConvGetsTheDefaultsThreeOrders) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU names imply features only with LLVM";
    SearchSpace space(blocked_conv(32, 14, 14, 64, 3, 1, kAvx512));
    EXPECT_EQ(space.sketches().size(), 3u);
    EXPECT_EQ(blocked_traces(space),
              (std::vector<std::string>{
                  "conv2d_nchwc.local: multi_level_tiling_blocked(rows_inside)",
                  "conv2d_nchwc.local: multi_level_tiling_blocked(rows_outside)",
                  "conv2d_nchwc.local: multi_level_tiling_blocked(input_blocks_outside)"}));
    const Sketch& sk = space.sketches()[0];
    using K = SketchStageKind;
    std::vector<K> kinds;
    for (const SketchStage& st : sk.stages) kinds.push_back(st.kind);
    // x, the padding (left to annotation), w, conv2d_nchwc.local, conv2d_nchwc.
    EXPECT_EQ(kinds, (std::vector<K>{K::Placeholder, K::Plain, K::Placeholder, K::Blocked,
                                     K::BlockedOutput}));
    EXPECT_EQ(sk.tiles.size(), 2u);  // blocks (of 4), columns (of 14)
    // An element-wise epilogue is the tile's output; AVX2 (8 lanes: a block of 16 is 2 vectors).
    SearchSpace relu(blocked_conv(32, 14, 14, 64, 3, 2, kAvx2, 16, 16, true));
    EXPECT_EQ(relu.sketches().size(), 3u);
    EXPECT_EQ(blocked_traces(relu).front(),
              "conv2d_nchwc: multi_level_tiling_blocked(rows_inside)");
}

TEST(BlockedSketch, OtherShapesKeepTheOtherRules) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU names imply features only with LLVM";
    // A block of 8 output channels is half an AVX-512 vector; on AVX2 it is one.
    EXPECT_TRUE(
        blocked_traces(SearchSpace(blocked_conv(16, 8, 8, 16, 3, 1, kAvx512, 8, 8))).empty());
    EXPECT_EQ(blocked_traces(SearchSpace(blocked_conv(16, 8, 8, 16, 3, 1, kAvx2, 8, 8))).size(),
              3u);
    // NCHW convolutions and pools on blocked activations (no reuse) are not blocked tiles.
    Tensor x = placeholder({1, 16, 8, 8}, Float(32), "x");
    Tensor w = placeholder({32, 16, 3, 3}, Float(32), "w");
    Tensor y = op::conv2d_nchw(x, w, op::conv_params(1, 1));
    EXPECT_TRUE(
        blocked_traces(SearchSpace(SearchTask(TensorDAG{{x, w}, {y}}, Target(kAvx512)))).empty());
    Tensor xb = placeholder({1, 2, 8, 8, 16}, Float(32), "x");
    Tensor pool = op::pool2d(xb, op::PoolKind::Max, {3, 3}, {2, 2}, {1, 1, 1, 1});
    EXPECT_TRUE(
        blocked_traces(SearchSpace(SearchTask(TensorDAG{{xb}, {pool}}, Target(kAvx512)))).empty());
    // GPUs keep theirs.
    EXPECT_TRUE(blocked_traces(SearchSpace(blocked_conv(32, 14, 14, 64, 3, 1, "cuda -arch=sm_90")))
                    .empty());
}

// Every order's samples compute the convolution: odd widths (7: columns of 1 or 7; 9 at stride
// 2: 5), blocks of 8 and 16 channels (whole vectors of the host's lanes), ReLU fused.
TEST(BlockedSketch, SamplesComputeTheConvolution) {
    if (!has_llvm_backend()) GTEST_SKIP() << "needs the LLVM backend";
    struct Case {
        int64_t c, h, w, k, r, stride, block;
        bool relu;
    };
    const int64_t lanes = Target("llvm").vector_lanes(Float(32));
    for (const Case& k : {Case{16, 7, 7, 32, 3, 1, 16, false}, Case{16, 9, 9, 48, 3, 2, 16, true},
                          Case{16, 6, 10, 32, 1, 1, 8, false}}) {
        if (k.block % lanes != 0) continue;  // not a blocked tile on this host
        SCOPED_TRACE(::testing::Message() << k.c << " -> " << k.k << " at " << k.h << " x " << k.w
                                          << ", " << k.r << " x " << k.r << " s" << k.stride);
        SearchTask task = blocked_conv(k.c, k.h, k.w, k.k, k.r, k.stride, "llvm -num-cores=2",
                                       k.block, k.block, k.relu);
        SearchSpace space(task);
        ASSERT_EQ(space.sketches().size(), 3u);
        // The interpreter where the task is small enough, the JIT always.
        const bool interpreted = task_flops(task) <= kInterpretFlops;
        std::set<std::string> states;
        for (int sketch = 0; sketch < 3; ++sketch)
            for (const SearchState& s : samples(space, sketch, 2, 5 + sketch)) {
                expect_state_matches_reference(task, s, "sketch " + std::to_string(sketch));
                if (interpreted) expect_jit_matches_reference(s.schedule, reduction_length(task));
                states.insert(s.schedule.to_json());
            }
        EXPECT_GE(states.size(), 4u);  // the samples differ
    }
}

TEST(BlockedSketch, TilesFitTheRegisters) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU names imply features only with LLVM";
    for (const char* target : {kAvx512, kAvx2}) {
        SCOPED_TRACE(target);
        const int64_t lanes = Target(target).vector_lanes(Float(32)),
                      registers = lanes == 16 ? 32 : 16;
        SearchSpace space(blocked_conv(32, 28, 28, 128, 3, 1, target));
        SampleResult r = space.sample(48, 3);
        ASSERT_GE(r.states.size(), 24u);
        std::set<std::pair<int64_t, int64_t>> tiles;
        for (const SearchState& s : r.states) {
            const Stage& out = s.schedule.stage(static_cast<int>(s.schedule.stages().size()) - 1);
            const int n = static_cast<int>(out.leaf.size());
            auto leaf = [&](int pos) { return *out.iters[out.leaf[pos]].const_extent(); };
            const int64_t m = leaf(n - 3), ut = leaf(n - 2), vectors = m * (leaf(n - 1) / lanes);
            EXPECT_LE(ut * vectors + vectors + 1, registers);
            EXPECT_EQ(out.iters[out.leaf[0]].annotation, IterAnnotation::Parallel);
            tiles.insert({m, ut});
        }
        EXPECT_GE(tiles.size(), 4u);
    }
}

TEST(BlockedSketch, MutantsStayValidAndRecordsReplay) {
    if (!has_llvm_backend()) GTEST_SKIP() << "needs the LLVM backend";
    SearchTask task = blocked_conv(16, 8, 8, 32, 3, 1, "llvm -num-cores=2", 8, 8);
    SearchSpace space(task);
    ASSERT_EQ(space.sketches().size(), 3u);
    std::vector<SearchState> states = samples(space, 2, 3, 7);
    ASSERT_FALSE(states.empty());
    std::vector<std::string> names = space.mutations(states[0]);
    EXPECT_NE(std::find(names.begin(), names.end(), "mutate_tile_size"), names.end());
    std::mt19937_64 rng(3);
    int made = 0;
    for (int i = 0; i < 24; ++i) {
        std::optional<SearchState> child = space.mutate(states[i % states.size()], rng);
        if (!child) continue;
        ++made;
        EXPECT_TRUE(space.check(child->schedule).empty());
        EXPECT_EQ(space.match_sketch(child->schedule), 2);
        if (made <= 3)
            expect_state_matches_reference(task, *child,
                                           "mutant " + std::to_string(i) + " " + child->origin);
    }
    EXPECT_GE(made, 8);
    Schedule again = task.apply_record(states[0].schedule.to_json());
    EXPECT_EQ(again.to_json(), states[0].schedule.to_json());
}

}  // namespace blocked_sketch_test
