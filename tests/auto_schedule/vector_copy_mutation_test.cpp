// The mutations that keep and change the vector lanes of a GPU state's copies (Mutate.cpp):
// a tile-size mutant of a state whose read caches are 4 lanes wide narrows a copy's lanes where
// the new tile's slice no longer holds them; mutate_shared_layout
// draws a read cache's layout and lanes together, so a scalar, kept A tile reaches tutorial 05
// step 6's transposed 4-lane copy in one mutation; mutate_fetch_lanes changes a cooperative
// fetch's lanes (1, 2, 4) in both directions; an output's store from registers (vectorize_store)
// takes the widest lanes that divide its innermost loop, at annotation and after a tile
// mutation. Mutants check, match the sketch and run.
#include <algorithm>
#include <cctype>
#include <map>
#include <random>

#include "auto_schedule/ReadCacheTestUtil.h"
#include "auto_schedule/SearchTestUtil.h"
#include "tessel/auto_schedule/space/SearchSpace.h"
#include "tessel/ir/IRPrinter.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

constexpr const char* kSm90 = "cuda -arch=sm_90";

SearchTask gemm(int64_t n) {
    return SearchTask("matmul", {n, n, n, Float(32)}, Target(kSm90));
}

// Runs the n^3 GEMM schedule `s` in the SPMD interpreter against the reference and, with the
// CUDA backend, checks that its PTX has `instruction` (a 128-bit access).
void expect_runs_with(const Schedule& s, int64_t n, const std::string& what,
                      const std::string& instruction) {
    GpuProgram p = gpu_program(what, s, n);
    EXPECT_NO_THROW(check_in_interpreter(p, make_gpu_data(p, 3)));
    if (has_cuda_backend()) {
        std::string ptx = compile_for_gpu(p).get_source("ptx");
        EXPECT_NE(ptx.find(instruction), std::string::npos) << what << ": no " << instruction;
    }
}

// A state of the read-cache sketch with `tiles` (k: 3 levels, i and j: 5) whose read caches and
// fetches satisfy `want` (nullopt when none is drawn).
template <typename Want>
std::optional<SearchState> drawn(const SearchSpace& space, const std::vector<int64_t>& k,
                                 const std::vector<int64_t>& ij, uint64_t seed, Want want) {
    const int v = read_cache_variant(space);
    std::vector<std::vector<int64_t>> tiles;
    for (const TileGroup& g : space.sketches()[v].tiles)
        tiles.push_back(g.steps.size() == 2 ? k : ij);
    std::mt19937_64 rng(seed);
    for (int d = 0; d < 5000; ++d)
        if (std::optional<SearchState> s = space.annotate(v, tiles, rng); s && want(s->schedule))
            return s;
    return std::nullopt;
}

// Every leaf loop's extent of `s`, as text (its bounds as they are kept, or inferred).
std::string leaf_extents(const Schedule& s) {
    std::string out;
    for (const std::vector<Expr>& stage : s.infer_extents()) {
        for (const Expr& e : stage) out += to_string(e) + " ";
        out += "| ";
    }
    return out;
}

// Tutorial 05 step 6's tiles at 4096^3 with 4-lane read caches and 4-lane fetches: a tile-size
// mutant whose new tiles no longer hold 4 lanes in a copy's slice gets the widest lanes that fit
// (as annotation would draw them), not a guarded 4-lane copy; the mutants check, and one with
// narrowed lanes compiles. A mutant's schedule, whose bounds the lane fitting inferred and kept,
// has the bounds of its steps replayed afresh.
TEST(VectorCopyMutation, TileMutantsKeepLanesThatDivideTheirCopies) {
    SearchTask task = gemm(4096);
    SearchSpaceOptions o;
    o.lower = false;  // as the tuner's space
    SearchSpace space(task, o);
    std::optional<SearchState> step6 =
        drawn(space, {512, 1, 8}, {32, 2, 16, 1, 4}, 6, [](const Schedule& x) {
            return vector_lanes(x, "A.shared.local") == 4 &&
                   vector_lanes(x, "B.shared.local") == 4 && vector_lanes(x, "A.shared") == 4 &&
                   vector_lanes(x, "B.shared") == 4;
        });
    ASSERT_TRUE(step6.has_value());
    std::mt19937_64 rng(11);
    int tiles = 0, kept = 0;
    std::optional<SearchState> narrowed;
    for (int i = 0; i < 80; ++i) {
        std::optional<SearchState> m = space.mutate(*step6, rng);
        if (!m || m->origin != "mutate_tile_size") continue;
        ++tiles;
        EXPECT_TRUE(space.check(m->schedule).empty());
        EXPECT_EQ(leaf_extents(m->schedule),
                  leaf_extents(replay(task.initial_schedule(), m->schedule.steps())));
        bool four = vector_lanes(m->schedule, "A.shared.local") == 4 &&
                    vector_lanes(m->schedule, "B.shared.local") == 4;
        kept += four;
        if (!four && !narrowed) narrowed = m;
    }
    EXPECT_GT(tiles, 40);
    EXPECT_GT(kept, tiles / 2);  // most tile changes leave a slice of 4
    ASSERT_TRUE(narrowed.has_value()) << "no mutant needed narrower lanes: the test shows nothing";
    EXPECT_EQ(vector_lanes(narrowed->schedule, "A.shared.local") *
                  vector_lanes(narrowed->schedule, "B.shared.local"),
              8);  // one copy narrowed to 2 lanes
    if (has_cuda_backend()) {
        EXPECT_NO_THROW(compile_for_gpu(gpu_program("narrowed", narrowed->schedule, 4096)));
    }
}

// A read cache's layout and lanes change together: from a kept, scalar A tile, some
// mutate_shared_layout mutants have A transposed with 4-lane (128-bit) copies; they check and
// compute the GEMM.
TEST(VectorCopyMutation, SharedLayoutMutationReachesTransposedVectorCopies) {
    SearchTask task = gemm(128);
    SearchSpace space(task);
    std::optional<SearchState> scalar =
        drawn(space, {32, 1, 4}, {2, 2, 8, 1, 4}, 3, [](const Schedule& x) {
            return !transposed(x, "A.shared") && vector_lanes(x, "A.shared.local") == 1;
        });
    ASSERT_TRUE(scalar.has_value());
    const SearchState& s = *scalar;
    std::mt19937_64 rng(5);
    int layout = 0, reached = 0;
    const SearchState* first = nullptr;
    std::vector<SearchState> kept;
    for (int i = 0; i < 160; ++i) {
        std::optional<SearchState> m = space.mutate(s, rng);
        if (!m || m->origin != "mutate_shared_layout") continue;
        ++layout;
        EXPECT_TRUE(space.check(m->schedule).empty());
        EXPECT_EQ(space.match_sketch(m->schedule), read_cache_variant(space));
        if (transposed(m->schedule, "A.shared") &&
            vector_lanes(m->schedule, "A.shared.local") == 4) {
            ++reached;
            kept.push_back(*m);
        }
    }
    EXPECT_GT(layout, 10);
    EXPECT_GT(reached, 0);
    if (!kept.empty()) first = &kept.front();
    ASSERT_NE(first, nullptr);
    expect_runs_with(first->schedule, 128, "transposed 4-lane mutant", "ld.shared.v4.f32");
}

// mutate_fetch_lanes: a fetch's lanes go up from 1 and down to 1; the mutants check and run.
TEST(VectorCopyMutation, FetchLanesMutateBothWays) {
    SearchTask task = gemm(64);
    SearchSpace space(task);
    std::mt19937_64 rng(2);
    std::map<std::pair<int64_t, int64_t>, int> moves;  // (before, after) of A's fetch
    std::optional<SearchState> ran;
    for (uint64_t seed = 0; seed < 6; ++seed) {
        SampleResult r = space.sample(4, 100 + seed);
        for (const SearchState& s : r.states)
            for (int i = 0; i < 12; ++i) {
                std::optional<SearchState> m = space.mutate(s, rng);
                if (!m || m->origin != "mutate_fetch_lanes") continue;
                EXPECT_TRUE(space.check(m->schedule).empty());
                EXPECT_EQ(space.match_sketch(m->schedule), s.sketch);
                for (const char* f : {"A.shared", "B.shared"})
                    if (vector_lanes(m->schedule, f) != vector_lanes(s.schedule, f))
                        ++moves[{vector_lanes(s.schedule, f), vector_lanes(m->schedule, f)}];
                if (!ran && vector_lanes(s.schedule, "A.shared") == 1 &&
                    vector_lanes(m->schedule, "A.shared") > 1)
                    ran = m;
            }
    }
    int up = 0, down = 0;
    for (auto& [move, n] : moves) (move.first < move.second ? up : down) += n;
    EXPECT_GT(up, 0);
    EXPECT_GT(down, 0);
    ASSERT_TRUE(ran.has_value());
    GpuProgram p = gpu_program("fetch lanes mutant", ran->schedule, 64);
    EXPECT_NO_THROW(check_in_interpreter(p, make_gpu_data(p, 3)));
    if (has_cuda_backend()) {
        EXPECT_NO_THROW(compile_for_gpu(p));
    }
}

// The extent of the innermost loop of C's store, before vectorize_store split it (the lanes
// times the split's outer part), or 0 when the loop is symbolic.
int64_t store_extent(const Schedule& s) {
    const Stage& c = s.stage(stage_named(s, "C"));
    std::vector<std::vector<Expr>> extents = s.infer_extents();
    const auto& row = extents[stage_named(s, "C")];
    const bool split = c.iters[c.leaf.back()].annotation == IterAnnotation::Vectorize;
    int64_t e = 1;
    for (size_t pos = c.leaf.size() - (split ? 2 : 1); pos < c.leaf.size(); ++pos) {
        std::optional<int64_t> v = as_const_int(row[pos]);
        if (!v) return 0;
        e *= *v;
    }
    return e;
}

// Whether C is the store of a local write cache (a Fused stage) in the state's sketch.
bool stores_from_registers(const SearchSpace& space, const SearchState& s) {
    return space.sketches()[s.sketch].stages[stage_named(s.schedule, "C")].kind ==
           SketchStageKind::Fused;
}

// vectorize_store: every sampled GEMM state stores C by the widest lanes (4, 2, else scalar)
// dividing the thread's innermost tile along j; a 4-lane state computes the GEMM in the SPMD
// interpreter and compiles to 128-bit global stores.
TEST(VectorCopyMutation, OutputStoresTakeTheWidestLanesThatDivide) {
    SearchTask task = gemm(128);
    SearchSpace space(task);
    std::map<int64_t, int> lanes;
    std::optional<SearchState> four;
    for (uint64_t seed = 0; seed < 4; ++seed)
        for (const SearchState& s : space.sample(16, 300 + seed).states) {
            if (!stores_from_registers(space, s)) continue;
            int64_t extent = store_extent(s.schedule);
            ASSERT_GT(extent, 0);
            int64_t want = extent % 4 == 0 ? 4 : extent % 2 == 0 ? 2 : 1;
            EXPECT_EQ(vector_lanes(s.schedule, "C"), want) << s.schedule.to_python();
            ++lanes[want];
            if (want == 4 && !four) four = s;
        }
    EXPECT_GT(lanes[4], 0);
    EXPECT_GT(lanes[1] + lanes[2], 0);  // the draws are not all of one kind: the test tells
    ASSERT_TRUE(four.has_value());
    expect_runs_with(four->schedule, 128, "4-lane store", "st.global.v4.f32");
}

// A tile mutant's store lanes follow its new tile, narrower and wider; the mutants check, and
// one whose lanes changed runs.
TEST(VectorCopyMutation, TileMutantsRefitTheStoreLanes) {
    SearchTask task = gemm(64);
    SearchSpace space(task);
    std::mt19937_64 rng(4);
    int tiles = 0, changed = 0;
    std::optional<SearchState> ran;
    for (const SearchState& s : space.sample(16, 77).states)
        for (int i = 0; i < 10 && stores_from_registers(space, s); ++i) {
            std::optional<SearchState> m = space.mutate(s, rng);
            if (!m || m->origin != "mutate_tile_size") continue;
            ++tiles;
            EXPECT_TRUE(space.check(m->schedule).empty());
            int64_t extent = store_extent(m->schedule);
            int64_t want = extent % 4 == 0 ? 4 : extent % 2 == 0 ? 2 : 1;
            EXPECT_EQ(vector_lanes(m->schedule, "C"), want) << m->schedule.to_python();
            if (vector_lanes(m->schedule, "C") != vector_lanes(s.schedule, "C")) {
                ++changed;
                if (!ran) ran = m;
            }
        }
    EXPECT_GT(tiles, 20);
    EXPECT_GT(changed, 0);
    ASSERT_TRUE(ran.has_value());
    GpuProgram p = gpu_program("store lanes mutant", ran->schedule, 64);
    EXPECT_NO_THROW(check_in_interpreter(p, make_gpu_data(p, 3)));
}

}  // namespace
