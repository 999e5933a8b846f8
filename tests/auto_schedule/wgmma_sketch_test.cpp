// The Hopper tensor-core sketch (SketchTensorCore.cpp's multi_level_tiling_wgmma,
// AnnotateTensorCore.cpp, the pipelining of WgmmaFetch tiles in Annotate.cpp and Mutate.cpp): an
// fp16 or bf16 GEMM on sm_90a whose m, n and k are multiples of 64 gets one wgmma sketch per
// block tile beside the mma.sync one; their random states compute the GEMM in the SPMD
// interpreter (warp groups, TMA on mbarriers, the producer warp group) and compile to wgmma
// through NVRTC; the pipeline depths and both producer choices occur; mutants stay valid; other
// shapes and targets keep mma.sync alone.
#include <algorithm>
#include <random>
#include <set>

#include "auto_schedule/SearchTestUtil.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

constexpr const char* kSm90a = "cuda -arch=sm_90a";

SearchTask hopper_gemm(int64_t m, int64_t n, int64_t k, Type t = Float(16),
                       const std::string& target = kSm90a) {
    return SearchTask("matmul_mixed", {m, n, k, t}, Target(target));
}

// The sketches' traces, in order.
std::vector<std::string> sketch_traces(const SearchSpace& space) {
    std::vector<std::string> out;
    for (const Sketch& sk : space.sketches())
        for (const std::string& t : sk.trace) out.push_back(t);
    return out;
}

// The interpreter (against the reference) and NVRTC (sm_90a: wgmma, TMA copies) on a state.
void expect_wgmma_runs(const SearchState& s, const std::string& what, int64_t k) {
    SCOPED_TRACE(what + "\n" + s.schedule.to_python());
    GpuProgram p = gpu_program(what, s.schedule, k);
    EXPECT_NO_THROW(check_in_interpreter(p, make_gpu_data(p, 5)));
    if (!has_cuda_backend()) return;
    std::string cu = compile_for_gpu(p, kSm90a).get_source("cu");
    EXPECT_NE(cu.find("wgmma.mma_async"), std::string::npos);
    EXPECT_NE(cu.find("cp.async.bulk.tensor"), std::string::npos);
}

TEST(WgmmaSketch, Sm90aGemmGetsOneSketchPerBlockTileBesideMmaSync) {
    // 128 x 256: block tiles of 64 or 128 rows, 64, 128 or 256 columns.
    SearchSpace space(hopper_gemm(128, 256, 128));
    EXPECT_EQ(sketch_traces(space),
              (std::vector<std::string>{
                  "C: multi_level_tiling_wgmma 128x256", "C: multi_level_tiling_wgmma 128x128",
                  "C: multi_level_tiling_wgmma 128x64", "C: multi_level_tiling_wgmma 64x256",
                  "C: multi_level_tiling_wgmma 64x128", "C: multi_level_tiling_wgmma 64x64",
                  "C: multi_level_tiling_tensor_core"}));
    std::vector<SketchStageKind> kinds;
    for (const SketchStage& st : space.sketches()[0].stages) kinds.push_back(st.kind);
    using K = SketchStageKind;
    EXPECT_EQ(kinds, (std::vector<K>{K::Placeholder, K::WgmmaFetch, K::Placeholder, K::WgmmaFetch,
                                     K::TensorCore, K::TensorCore}));
    // The block-row groups are its one tile group: 128 rows of 128 have one block row.
    ASSERT_EQ(space.sketches()[3].tiles.size(), 1u);
    EXPECT_EQ(space.sketches()[3].tiles[0].extent, 2);  // 64-row blocks
    const std::string py = space.sketches()[0].schedule.to_python();
    for (const char* step : {"wgmma_m64n256k16_f16", "s.tma(", "storage_swizzle", "store_c"})
        EXPECT_NE(py.find(step), std::string::npos) << step;
    // bf16 names its intrinsic.
    SearchSpace bf16(hopper_gemm(64, 64, 64, BFloat(16)));
    EXPECT_EQ(sketch_traces(bf16), (std::vector<std::string>{"C: multi_level_tiling_wgmma 64x64",
                                                             "C: multi_level_tiling_tensor_core"}));
    EXPECT_NE(bf16.sketches()[0].schedule.to_python().find("wgmma_m64n64k16_bf16"),
              std::string::npos);
}

TEST(WgmmaSketch, OtherShapesAndTargetsKeepMmaSyncAlone) {
    const std::vector<std::string> mma_only = {"C: multi_level_tiling_tensor_core"};
    // Not multiples of 64 (k of 96 has no whole k tiles; 192 x 80 no whole 64-column tile).
    EXPECT_EQ(sketch_traces(SearchSpace(hopper_gemm(128, 128, 96))), mma_only);
    EXPECT_EQ(sketch_traces(SearchSpace(hopper_gemm(192, 80, 64))), mma_only);
    // The portable sm_90 and sm_80 have no wgmma; tf32 products are mma.sync's.
    EXPECT_EQ(sketch_traces(SearchSpace(hopper_gemm(128, 128, 64, Float(16), "cuda -arch=sm_90"))),
              mma_only);
    EXPECT_EQ(sketch_traces(SearchSpace(hopper_gemm(128, 128, 64, Float(16), "cuda -arch=sm_80"))),
              mma_only);
    SearchSpaceOptions tf32;
    tf32.sketch.tensor_core_tf32 = true;
    EXPECT_EQ(sketch_traces(SearchSpace(hopper_gemm(128, 128, 64, Float(32)), tf32)), mma_only);
}

TEST(WgmmaSketch, SamplesComputeTheGemmWithEitherProducerAndEveryDepth) {
    // 128 x 128 x 128: two k tiles (deeper pipelines than tiles too), block tiles of 64 or 128
    // rows and columns.
    SearchSpace space(hopper_gemm(128, 128, 128));
    ASSERT_EQ(space.sketches().size(), 5u);
    std::set<int64_t> depths;
    std::set<bool> producers;
    int run = 0;
    for (int sketch : {0, 3}) {  // 128 x 128 (two consumer warp groups), 64 x 64 (one)
        for (const SearchState& s : sketch_samples(space, sketch, 14, 10 + sketch)) {
            const bool producer =
                s.schedule.to_python().find("warp_specialize") != std::string::npos;
            int64_t depth = 0;
            for (const Stage& st : s.schedule.stages())
                if (st.scope == StorageScope::Shared) depth = st.pipeline_depth;
            depths.insert(depth);
            producers.insert(producer);
            // The first sketch without the producer warp group, the other with it, in the
            // interpreter.
            if (run == (sketch == 0 ? 0 : 1) && producer == (sketch != 0)) {
                expect_wgmma_runs(s, "sketch " + std::to_string(sketch), 128);
                ++run;
            }
        }
    }
    EXPECT_EQ(run, 2);
    EXPECT_EQ(producers, (std::set<bool>{false, true}));
    EXPECT_GE(*depths.begin(), 2);
    EXPECT_LE(*depths.rbegin(), 8);
    EXPECT_GE(depths.size(), 5u);  // depths 2 to 8 are drawn
}

TEST(WgmmaSketch, MutantsStayValid) {
    // 256 x 128 x 128: two block rows of 128, so the block-row groups have a choice.
    SearchSpace space(hopper_gemm(256, 128, 128));
    std::vector<SearchState> states = sketch_samples(space, 0, 2, 7);  // 128 x 128
    ASSERT_FALSE(states.empty());
    std::vector<std::string> names = space.mutations(states[0]);
    EXPECT_NE(std::find(names.begin(), names.end(), "mutate_pipelining"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "mutate_tile_size"), names.end());
    MutantsSeen seen =
        check_mutants(space, states, 0, 10, 3, [](const SearchState& child, int made) {
            for (const Stage& st : child.schedule.stages()) {  // TMA needs its pipeline
                if (st.scope == StorageScope::Shared) {
                    EXPECT_GE(st.pipeline_depth, 2);
                }
            }
            if (made == 1) expect_wgmma_runs(child, "mutant " + child.origin, 128);
        });
    EXPECT_GE(seen.made, 7);
    EXPECT_EQ(seen.kinds, (std::set<std::string>{"mutate_tile_size", "mutate_pipelining"}));
}

}  // namespace
