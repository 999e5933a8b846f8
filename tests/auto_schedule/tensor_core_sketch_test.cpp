// The tensor-core sketch (SketchTensorCore.cpp, AnnotateTensorCore.cpp) and the pipelining
// choice of shared fetches (Annotate.cpp's `pipelining`, Mutate.cpp's `mutate_pipelining`): an
// fp16 GEMM with fp32 accumulation on sm_80 gets the tensor-core sketch alone; its random states
// compute the GEMM in the SPMD interpreter (warps, fragment layouts, cp.async landing, race
// detector) and their PTX holds mma.sync; the pipelining choices all occur and lower; mutants stay
// valid; a tuning record replays the state; float32 (unless asked), sm_70 and other computations
// keep the plain rules.
#include <algorithm>
#include <random>
#include <set>
#include <sstream>

#include "auto_schedule/SearchTestUtil.h"
#include "tessel/auto_schedule/records/Record.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/lower/Lower.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

constexpr const char* kSm80 = "cuda -arch=sm_80";

SearchTask mixed_gemm(int64_t m, int64_t n, int64_t k, Type t = Float(16),
                      const std::string& target = kSm80) {
    return SearchTask("matmul_mixed", {m, n, k, t}, Target(target));
}

bool is_tensor_core(const Sketch& sk) {
    return std::find(sk.trace.begin(), sk.trace.end(), "C: multi_level_tiling_tensor_core") !=
           sk.trace.end();
}

int tensor_core_sketches(const SearchSpace& space) {
    return static_cast<int>(
        std::count_if(space.sketches().begin(), space.sketches().end(), is_tensor_core));
}

// 1 none, 2 double_buffer, 3.. pipeline depth + 1 (of the state's first shared stage).
int pipelining_of(const SearchState& s) {
    for (const Stage& st : s.schedule.stages())
        if (st.scope == StorageScope::Shared)
            return st.pipeline_depth  ? static_cast<int>(st.pipeline_depth) + 1
                   : st.double_buffer ? 2
                                      : 1;
    return 0;
}

// The interpreter and NVRTC (sm_80 PTX with mma.sync) on a state.
void expect_runs(const SearchState& s, const std::string& what) {
    SCOPED_TRACE(what + "\n" + s.schedule.to_python());
    GpuProgram p = gpu_program(what, s.schedule, 64);
    EXPECT_NO_THROW(check_in_interpreter(p, make_gpu_data(p, 3)));
    if (!has_cuda_backend()) return;
    std::string ptx = compile_for_gpu(p, kSm80).get_source("ptx");
    EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k16"), std::string::npos);
}

TEST(TensorCoreSketch, Fp16GemmOnSm80GetsTheTensorCoreSketchAlone) {
    SearchSpace space(mixed_gemm(128, 128, 64));
    ASSERT_EQ(space.sketches().size(), 1u);
    const Sketch& sk = space.sketches()[0];
    EXPECT_TRUE(is_tensor_core(sk));
    std::vector<SketchStageKind> kinds;
    for (const SketchStage& st : sk.stages) kinds.push_back(st.kind);
    using K = SketchStageKind;
    // A, A.shared, A.shared.warp, B, B.shared, B.shared.warp, C.warp, C.
    EXPECT_EQ(kinds,
              (std::vector<K>{K::Placeholder, K::TensorCoreFetch, K::TensorCore, K::Placeholder,
                              K::TensorCoreFetch, K::TensorCore, K::TensorCore, K::TensorCore}));
    EXPECT_EQ(sk.tiles.size(), 3u);  // m, n (blocks, warps, fragments), k (shared, fragments)
    std::string py = sk.schedule.to_python();
    for (const char* intrin : {"mma_m16n8k16_f16", "ldmatrix_a", "ldmatrix_b_trans_x4", "store_c"})
        EXPECT_NE(py.find(intrin), std::string::npos) << intrin << "\n" << py;
    // bfloat16 takes its own mma.
    SearchSpace bf(mixed_gemm(64, 64, 32, BFloat(16)));
    ASSERT_EQ(tensor_core_sketches(bf), 1);
    EXPECT_NE(bf.sketches()[0].schedule.to_python().find("mma_m16n8k16_bf16"), std::string::npos);
}

TEST(TensorCoreSketch, NotForFloat32BySm70OrOtherComputations) {
    // float32 stays on the plain rules unless tf32 is asked for.
    SearchTask fp32 = mixed_gemm(64, 64, 32, Float(32));
    EXPECT_EQ(tensor_core_sketches(SearchSpace(fp32)), 0);
    SearchSpaceOptions tf32;
    tf32.sketch.tensor_core_tf32 = true;
    SearchSpace with_tf32(fp32, tf32);
    EXPECT_EQ(tensor_core_sketches(with_tf32), 1);
    EXPECT_NE(with_tf32.sketches()[0].schedule.to_python().find("mma_m16n8k8_tf32"),
              std::string::npos);
    // No tensor cores of this kind before sm_80, none on CPUs.
    EXPECT_EQ(
        tensor_core_sketches(SearchSpace(mixed_gemm(64, 64, 32, Float(16), "cuda -arch=sm_70"))),
        0);
    EXPECT_GT(SearchSpace(mixed_gemm(64, 64, 32, Float(16), "cuda -arch=sm_70")).sketches().size(),
              0u);
    EXPECT_EQ(tensor_core_sketches(SearchSpace(mixed_gemm(64, 64, 32, Float(16), "llvm"))), 0);
    // m not a multiple of 16: tensorize needs whole tiles.
    EXPECT_EQ(tensor_core_sketches(SearchSpace(mixed_gemm(72, 64, 32))), 0);
    // Not a matmul of this layout: A transposed (A[k, i]); an fp16 product summed in fp16 (no
    // fp32 accumulation); a reduction over two axes.
    Tensor At = placeholder({32, 64}, Float(16), "A"), B = placeholder({32, 64}, Float(16), "B");
    IterVar k = reduce_axis({0, 32}, "k");
    Tensor Ct = compute(
        {64, 64},
        [&](Var i, Var j) {
            return sum(cast(Float(32), At(k, i)) * cast(Float(32), B(k, j)), {k});
        },
        "C");
    EXPECT_EQ(
        tensor_core_sketches(SearchSpace(SearchTask(TensorDAG{{At, B}, {Ct}}, Target(kSm80)))), 0);
    SearchTask half("matmul", {int64_t(64), int64_t(64), int64_t(32), Float(16)}, Target(kSm80));
    EXPECT_EQ(tensor_core_sketches(SearchSpace(half)), 0);
    Tensor X = placeholder({64, 4, 8}, Float(16), "X"), W = placeholder({4, 8, 64}, Float(16), "W");
    IterVar r = reduce_axis({0, 4}, "r"), s = reduce_axis({0, 8}, "s");
    Tensor Y = compute(
        {64, 64},
        [&](Var i, Var j) {
            return sum(cast(Float(32), X(i, r, s)) * cast(Float(32), W(r, s, j)), {r, s});
        },
        "Y");
    EXPECT_EQ(tensor_core_sketches(SearchSpace(SearchTask(TensorDAG{{X, W}, {Y}}, Target(kSm80)))),
              0);
}

TEST(TensorCoreSketch, SamplesComputeTheGemmAndHoldMmaSync) {
    SearchSpace space(mixed_gemm(128, 128, 64));
    std::set<std::string> tiles;
    for (uint64_t seed : {1, 2, 3}) {
        std::vector<SearchState> states = sketch_samples(space, 0, 2, seed);
        for (size_t i = 0; i < states.size(); ++i) {
            expect_runs(states[i], "seed " + std::to_string(seed) + " sample " + std::to_string(i));
            std::vector<int64_t> l;
            for (const TileGroup& g : space.sketches()[0].tiles)
                for (int step : g.steps)
                    l.push_back(std::get<SplitStep>(states[i].schedule.steps()[step]).factor);
            tiles.insert(::testing::PrintToString(l));
        }
    }
    EXPECT_GE(tiles.size(), 3u);  // the samples differ
}

TEST(TensorCoreSketch, PipeliningChoicesOccurAndLower) {
    // 256 x 128 x 64: room for a few k tiles (pipelines of 2 to 4 copies have a loop to fill).
    SearchSpace space(mixed_gemm(256, 128, 64));
    SampleResult r = space.sample(48, 5);
    ASSERT_GE(r.states.size(), 40u);
    // k tiles of one fragment too: their barrier sits inside the fragments' allocation, which
    // inject_double_buffer once refused ("a barrier inside its computation").
    for (const auto& [why, n] : r.rejected)
        EXPECT_EQ(why.find("barrier"), std::string::npos) << why;
    std::map<int, const SearchState*> by_choice;
    for (const SearchState& s : r.states) by_choice.emplace(pipelining_of(s), &s);
    std::vector<int> seen;
    for (const auto& [choice, s] : by_choice) seen.push_back(choice);
    EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 4, 5}));  // none, double_buffer, pipeline 2..4
    for (int choice : {2, 4}) {  // double_buffer, pipeline(3) in the interpreter
        if (!by_choice.count(choice)) continue;
        expect_runs(*by_choice[choice], "pipelining choice " + std::to_string(choice));
    }
    // Without cp.async (sm_70, plain tiling): none or double_buffer only.
    SearchSpace old(SearchTask("matmul", {int64_t(128), int64_t(128), int64_t(64), Float(32)},
                               Target("cuda -arch=sm_70")));
    for (const SearchState& s : old.sample(24, 5).states) EXPECT_LE(pipelining_of(s), 2);
}

TEST(TensorCoreSketch, MutantsStayValid) {
    SearchSpace space(mixed_gemm(128, 128, 64));
    std::vector<SearchState> states = sketch_samples(space, 0, 2, 7);
    ASSERT_FALSE(states.empty());
    std::vector<std::string> names = space.mutations(states[0]);
    EXPECT_NE(std::find(names.begin(), names.end(), "mutate_pipelining"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "mutate_tile_size"), names.end());
    MutantsSeen seen =
        check_mutants(space, states, 0, 16, 3, [](const SearchState& child, int made) {
            if (made <= 2)
                expect_runs(child, "mutant " + std::to_string(made) + " " + child.origin);
        });
    EXPECT_GE(seen.made, 12);
    EXPECT_TRUE(seen.kinds.count("mutate_tile_size"));
}

TEST(TensorCoreSketch, TuningRecordReplaysTheState) {
    SearchTask task = mixed_gemm(128, 128, 64);
    SearchSpace space(task);
    SearchState s = sketch_samples(space, 0, 1, 11).at(0);
    TuningRecord rec;
    rec.dag_hash = task.dag_hash_hex();
    rec.workload = "matmul_mixed";
    rec.target = task.target().str();
    rec.schedule_json = s.schedule.to_json();
    rec.costs = {1e-3};
    std::optional<TuningRecord> back = record_from_json(record_to_json(rec));
    ASSERT_TRUE(back.has_value());
    Schedule again = task.apply_record(back->schedule_json);
    EXPECT_EQ(again.to_json(), s.schedule.to_json());
    EXPECT_EQ(space.match_sketch(again), 0);
    auto printed = [&](const Schedule& x) {
        std::ostringstream os;
        os << lower(x, task.dag().args(), task.target(), "main").body;
        return os.str();
    };
    EXPECT_EQ(printed(again), printed(s.schedule));
}

}  // namespace
