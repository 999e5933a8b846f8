// The register read-cache sketch (SketchReadCache.cpp, AnnotateReadCache.cpp, Mutate.cpp's
// mutate_shared_layout): an fp32 GEMM on a GPU gets it as a second sketch beside the plain one;
// its random states compute the GEMM in the SPMD interpreter (race detector on) at 64^3 and at a
// shape no tile divides, and compile through NVRTC; the layout and vector choices all occur; the
// schedule of tutorials/05_gpu_gemm.py step 6 at 4096^3 is one of its states; mutants stay valid;
// a tuning record replays a state; the cost model's features extract.
#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <sstream>

#include "auto_schedule/ReadCacheTestUtil.h"
#include "auto_schedule/SearchTestUtil.h"
#include "tessel/auto_schedule/features/Features.h"
#include "tessel/auto_schedule/records/Record.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/lower/Lower.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

constexpr const char* kSm90 = "cuda -arch=sm_90";

SearchTask gemm(int64_t m, int64_t n, int64_t k, const std::string& target = kSm90) {
    return SearchTask("matmul", {m, n, k, Float(32)}, Target(target));
}

bool has_read_caches(const Sketch& sk) {
    return std::any_of(sk.trace.begin(), sk.trace.end(), [](const std::string& t) {
        return t.find("cache_read_local") != std::string::npos;
    });
}

// The index of the read-cache sketch (-1 when there is none).
int variant(const SearchSpace& space) {
    for (size_t k = 0; k < space.sketches().size(); ++k)
        if (has_read_caches(space.sketches()[k])) return static_cast<int>(k);
    return -1;
}

// Random states of the read-cache sketch.
std::vector<SearchState> variant_samples(const SearchSpace& space, int count, uint64_t seed) {
    std::vector<SearchState> out;
    std::mt19937_64 rng(seed);
    for (int tries = 0; tries < 8 * count && static_cast<int>(out.size()) < count; ++tries)
        if (auto s = space.annotate(variant(space), rng)) out.push_back(std::move(*s));
    EXPECT_EQ(static_cast<int>(out.size()), count) << "seed " << seed;
    return out;
}

bool padded(const Schedule& s, const std::string& stage) {
    const Stage& st = s.stage(stage_named(s, stage));
    return std::any_of(st.storage.begin(), st.storage.end(),
                       [](const StorageDim& d) { return d.align_factor > 0; });
}

// The SPMD interpreter against the reference, and NVRTC.
void expect_runs(const SearchTask& task, const SearchState& s, const std::string& what) {
    SCOPED_TRACE(what + "\n" + s.schedule.to_python());
    GpuProgram p = gpu_program(what, s.schedule, reduction_length(task));
    EXPECT_NO_THROW(check_in_interpreter(p, make_gpu_data(p, 3)));
    if (has_cuda_backend()) {
        EXPECT_NO_THROW(compile_for_gpu(p));
    }
}

TEST(ReadCacheSketch, AGpuGemmGetsTheVariantBesideThePlainSketch) {
    SearchSpace space(gemm(64, 64, 64));
    ASSERT_EQ(space.sketches().size(), 2u);
    EXPECT_FALSE(has_read_caches(space.sketches()[0]));  // the plain sketch keeps its place
    const Sketch& sk = space.sketches()[1];
    EXPECT_EQ(sk.trace, (std::vector<std::string>{
                            "C: cache_write", "C.local: multi_level_tiling_with_fusion(3)",
                            "B.shared: cache_read_shared", "B.shared.local: cache_read_local",
                            "A.shared: cache_read_shared", "A.shared.local: cache_read_local"}));
    using K = SketchStageKind;
    std::vector<K> kinds;
    for (const SketchStage& st : sk.stages) kinds.push_back(st.kind);
    EXPECT_EQ(kinds, (std::vector<K>{K::Placeholder, K::SharedFetch, K::ReadCache, K::Placeholder,
                                     K::SharedFetch, K::ReadCache, K::Tiled, K::Fused}));
    // Computed at the innermost reduction loop of C.local (SSSRRSRS: leaf 10, k's third
    // level), the shared tiles at its outer one (leaf 6).
    for (const char* name : {"A.shared.local", "B.shared.local"}) {
        const Stage& st = sk.schedule.stage(stage_named(sk.schedule, name));
        EXPECT_EQ(st.scope, StorageScope::Local);
        EXPECT_EQ(st.attach_stage, 6);
        EXPECT_EQ(st.attach_iter, sk.schedule.stage(6).leaf[10]) << name;
    }
    // CPUs keep their sketches.
    SearchSpace cpu(gemm(64, 64, 64, "llvm"));
    for (const Sketch& c : cpu.sketches()) EXPECT_FALSE(has_read_caches(c));
}

TEST(ReadCacheSketch, SamplesComputeTheGemm) {
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{64, 64, 64}, {100, 72, 40}}) {
        SearchTask task = gemm(m, n, k);
        SearchSpace space(task);
        std::vector<SearchState> states = variant_samples(space, 3, 1 + m);
        for (size_t i = 0; i < states.size(); ++i)
            expect_runs(task, states[i],
                        std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                            " sample " + std::to_string(i));
    }
}

TEST(ReadCacheSketch, LayoutAndVectorChoicesOccurAndLower) {
    SearchTask task = gemm(128, 128, 64);
    SearchSpace space(task);
    std::vector<SearchState> states = variant_samples(space, 40, 7);
    std::set<int64_t> a_lanes, b_lanes;
    int a_transposed = 0, a_padded = 0, b_padded = 0;
    const SearchState* vectors = nullptr;  // both copies vectorised
    for (const SearchState& s : states) {
        EXPECT_FALSE(transposed(s.schedule, "B.shared"));  // B's slice is a row already
        a_lanes.insert(vector_lanes(s.schedule, "A.shared.local"));
        b_lanes.insert(vector_lanes(s.schedule, "B.shared.local"));
        a_transposed += transposed(s.schedule, "A.shared");
        a_padded += padded(s.schedule, "A.shared");
        b_padded += padded(s.schedule, "B.shared");
        // A vector along A's column needs the transposed tile.
        if (vector_lanes(s.schedule, "A.shared.local") > 1) {
            EXPECT_TRUE(transposed(s.schedule, "A.shared"));
            if (vector_lanes(s.schedule, "B.shared.local") > 1) vectors = &s;
        }
    }
    EXPECT_TRUE(a_lanes.count(2) || a_lanes.count(4));
    EXPECT_EQ(b_lanes, (std::set<int64_t>{1, 2, 4}));
    EXPECT_GT(a_transposed, 0);
    EXPECT_LT(a_transposed, 40);
    EXPECT_GT(a_padded, 0);
    EXPECT_GT(b_padded, 0);
    ASSERT_NE(vectors, nullptr);
    expect_runs(task, *vectors, "vectorised read caches");
    if (has_cuda_backend()) {
        GpuProgram p = gpu_program("vectors", vectors->schedule, 64);
        std::string ptx = compile_for_gpu(p).get_source("ptx");
        EXPECT_NE(ptx.find("ld.shared.v"), std::string::npos) << "no vector shared loads";
    }
}

// Tutorial 05's step 6 at 4096^3 (choose_tiles: 128 x 128 blocks of 16 x 16 threads, each 2 x 2
// strided parts (vthread) of 4 x 4, 8 columns of k per step; A's tile transposed and padded; the
// read caches 4 lanes; both shared tiles double-buffered) is a state of the variant: with its
// tile lengths (one of the draws a useful launch allows: 256 threads, 1024 blocks, 64 outputs per
// thread, 8 KB of shared tiles), the annotation's own draws reach its other choices.
TEST(ReadCacheSketch, TutorialStep6IsInTheSpace) {
    SearchTask task = gemm(4096, 4096, 4096);
    SearchSpace space(task);
    const int v = variant(space);
    ASSERT_GE(v, 0);
    const Sketch& sk = space.sketches()[v];
    // C.local's tiles: k (R0, R1, R2), j and i (S0 blocks, S1 vthread, S2 threads, S3, S4).
    std::vector<std::vector<int64_t>> tiles;
    for (const TileGroup& g : sk.tiles)
        tiles.push_back(g.steps.size() == 2 ? std::vector<int64_t>{512, 1, 8}
                                            : std::vector<int64_t>{32, 2, 16, 1, 4});
    ASSERT_EQ(tiles.size(), 3u);
    std::mt19937_64 rng(6);
    std::optional<SearchState> found;
    int draws = 0;
    for (; draws < 3000 && !found; ++draws) {
        std::optional<SearchState> s = space.annotate(v, tiles, rng);
        ASSERT_TRUE(s.has_value());
        const Schedule& x = s->schedule;
        bool step6 = vector_lanes(x, "A.shared.local") == 4 &&
                     vector_lanes(x, "B.shared.local") == 4 && transposed(x, "A.shared") &&
                     padded(x, "A.shared") && x.stage(stage_named(x, "A.shared")).double_buffer &&
                     x.stage(stage_named(x, "B.shared")).double_buffer;
        if (step6) found = std::move(s);
    }
    ASSERT_TRUE(found.has_value()) << "not drawn in " << draws << " annotations";
    const Schedule& x = found->schedule;
    std::string py = x.to_python();
    EXPECT_NE(py.find("storage_reorder"), std::string::npos) << py;
    EXPECT_NE(py.find("storage_align"), std::string::npos) << py;
    EXPECT_NE(py.find("vthread"), std::string::npos) << py;
    // A's rows padded from 128 to 132 floats, as the tutorial's storage_align(0, 128, 4).
    const Stage& as = x.stage(stage_named(x, "A.shared"));
    EXPECT_EQ(as.storage[0].align_factor, 8);
    EXPECT_EQ(as.storage[0].align_offset, 4);
    EXPECT_TRUE(space.check(x).empty());
    EXPECT_FALSE(extract_features(task, x).values.empty());
    if (has_cuda_backend()) {
        std::string ptx = compile_for_gpu(gpu_program("step6", x, 4096)).get_source("ptx");
        EXPECT_NE(ptx.find("ld.shared.v4.f32"), std::string::npos) << "no 128-bit shared loads";
    }
}

TEST(ReadCacheSketch, MutantsStayValid) {
    SearchTask task = gemm(64, 64, 64);
    SearchSpace space(task);
    const int v = variant(space);
    std::vector<SearchState> states = variant_samples(space, 4, 9);
    ASSERT_FALSE(states.empty());
    std::vector<std::string> names = space.mutations(states[0]);
    EXPECT_NE(std::find(names.begin(), names.end(), "mutate_shared_layout"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "mutate_pipelining"), names.end());
    std::mt19937_64 rng(4);
    int made = 0, layouts = 0;
    for (int i = 0; i < 40; ++i) {
        std::optional<SearchState> child = space.mutate(states[i % states.size()], rng);
        if (!child) continue;
        ++made;
        EXPECT_TRUE(space.check(child->schedule).empty());
        EXPECT_EQ(space.match_sketch(child->schedule), v);
        if (child->origin != "mutate_shared_layout") continue;
        const Schedule& parent = states[i % states.size()].schedule;
        // Another layout or other lanes for one read cache.
        EXPECT_TRUE(transposed(child->schedule, "A.shared") != transposed(parent, "A.shared") ||
                    padded(child->schedule, "A.shared") != padded(parent, "A.shared") ||
                    padded(child->schedule, "B.shared") != padded(parent, "B.shared") ||
                    vector_lanes(child->schedule, "A.shared.local") !=
                        vector_lanes(parent, "A.shared.local") ||
                    vector_lanes(child->schedule, "B.shared.local") !=
                        vector_lanes(parent, "B.shared.local"));
        if (layouts++ == 0) expect_runs(task, *child, "layout mutant " + std::to_string(i));
    }
    EXPECT_GE(made, 30);
    EXPECT_GT(layouts, 0);
}

TEST(ReadCacheSketch, TuningRecordReplaysTheStateAndFeaturesExtract) {
    SearchTask task = gemm(100, 72, 40);
    SearchSpace space(task);
    for (const SearchState& s : variant_samples(space, 6, 13)) {
        TuningRecord rec;
        rec.dag_hash = task.dag_hash_hex();
        rec.workload = "matmul";
        rec.target = task.target().str();
        rec.schedule_json = s.schedule.to_json();
        rec.costs = {1e-3};
        std::optional<TuningRecord> back = record_from_json(record_to_json(rec));
        ASSERT_TRUE(back.has_value());
        Schedule again = task.apply_record(back->schedule_json);
        EXPECT_EQ(again.to_json(), s.schedule.to_json());
        EXPECT_EQ(space.match_sketch(again), variant(space));
        auto printed = [&](const Schedule& x) {
            std::ostringstream os;
            os << lower(x, task.dag().args(), task.target(), "main").body;
            return os.str();
        };
        EXPECT_EQ(printed(again), printed(s.schedule));
        FeatureMatrix f = extract_features(task, s.schedule);
        EXPECT_GT(f.rows, 0);
        for (float x : f.values) EXPECT_TRUE(std::isfinite(x));
    }
}

TEST(ReadCacheSketch, GivenTileLengthsMustBeFactorisations) {
    SearchSpace space(gemm(64, 64, 64));
    const int v = variant(space);
    ASSERT_GE(v, 0);
    std::mt19937_64 rng(1);
    EXPECT_THROW(space.annotate(v, std::vector<std::vector<int64_t>>{}, rng), ScheduleError);
    std::vector<std::vector<int64_t>> bad(space.sketches()[v].tiles.size(), {3, 1, 1});
    EXPECT_THROW(space.annotate(v, bad, rng), ScheduleError);
}

}  // namespace
