// Tutorial: optimising a CPU GEMM step by step, in C++.
//
// C = A · B for n×n float32 row-major matrices. Every step below is a schedule of the same
// tensor expression — the DAG never changes — built through LLVM, checked against a double-
// precision reference, and timed; each prints its GFLOP/s. The steps follow the classic route
// (TVM's "How to optimize GEMM on CPU" takes the same one):
//
//   1. the default schedule: i, j, k loops as written
//   2. blocking: 32×32 tiles of C, so a tile's rows of A and columns of B stay in cache
//   3. loop permutation: k outside the tile's inner loops, so the innermost loop walks rows
//   4. vectorization: the innermost 32 columns as one vector operation
//   5. packing B: a cache_read of B with blocked storage [n/32][k][32], so the innermost loop
//      reads B contiguously (array packing as a schedule decision, inside the timed call)
//   6. a write cache: the tile of C accumulated in a local buffer (cache_write), which LLVM keeps
//      in registers, and copied out once
//   7. unrolling the tile's rows
//   8. parallel: rows of tiles on all threads (TESSEL_NUM_THREADS)
//   9. sized for this CPU (gemm_schedule.cpp, what benchmarks/gemm_cpu measures against oneDNN,
//      and the structure of op.matmul's default schedule): register tiles as large as the
//      vector registers allow (12×32 with AVX-512, 6×16 with AVX2: Target::vector_lanes), column
//      blocks whose packed B takes a quarter of L2 (Target::l2_cache_bytes), B packed per block
//      by the core that sweeps it, the blocks in parallel; the tile kept in registers by LLVM
//      (tessel's alias scopes prove C disjoint from A and B)
//
//   tutorial_cpu_gemm [--small]     (--small: n = 128 and few repeats, as CI runs it)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gemm_schedule.h"
#include "tessel/driver/Build.h"
#include "tessel/runtime/NDArray.h"
#include "tessel/runtime/TimeEvaluator.h"
#include "tessel/te/Operation.h"

using namespace tessel;

namespace {

struct Gemm {
    Tensor A, B, C;
};

Gemm define_gemm(int64_t n) {
    Gemm g;
    g.A = placeholder({n, n}, Float(32), "A");
    g.B = placeholder({n, n}, Float(32), "B");
    IterVar k = reduce_axis(Range(0, n), "k");
    g.C = compute(
        {n, n}, [&](Var i, Var j) { return sum(g.A(i, k.var()) * g.B(k.var(), j), {k}); }, "C");
    return g;
}

constexpr int64_t kTile = 32;  // the tile of C (and the panel width of packed B)
constexpr int64_t kK = 4;      // the unit of k inside a tile

// Step 2: 32×32 tiles of C; k split by 4. Loops: io jo ii ji ko ki.
void block(Schedule& s, int c) {
    s.tile(c, 0, 1, kTile, kTile);  // io jo ii ji k
    s.split(c, 4, kK);              // io jo ii ji ko ki
}

// Step 3: io jo ko ii ki ji — the innermost loop runs along a row of B and of C.
void permute(Schedule& s, int c) {
    block(s, c);
    s.reorder(c, {0, 1, 4, 2, 5, 3});
}

// Step 4: the 32 columns of the innermost loop as one vector.
void vectorize(Schedule& s, int c) {
    permute(s, c);
    s.vectorize(c, 5);
}

// Step 5: B packed into column panels [n/32][k][32] for its reader stage `reader`, vectorized and
// parallel, computed once per call before the product (as oneDNN's sgemm does inside its call).
void pack_b(Schedule& s, const Gemm& g, int reader) {
    int bp = s.cache_read(s.stage_of(g.B), "global", {reader});
    s.storage_split(bp, 1, kTile);     // [k][j / 32][j % 32]
    s.storage_reorder(bp, {1, 0, 2});  // [j / 32][k][j % 32]
    s.split(bp, 1, kTile);             // k jo ji
    s.reorder(bp, {1, 0, 2});          // jo k ji
    s.vectorize(bp, 2);
    s.parallel(bp, 0);
}

// Step 6 (and 7, 8 with `unroll` / `parallel`): the tile of C accumulated in a local buffer at
// C's (io, jo) loop, then copied out; B packed as in step 5.
void write_cache(Schedule& s, const Gemm& g, bool unroll, bool parallel) {
    pack_b(s, g, s.cache_write(s.stage_of(g.C), "local"));  // cache_write: before C's loops change
    int c = s.stage_of(g.C), cl = c - 1;
    s.tile(c, 0, 1, 8, kTile);  // C: io jo ii ji (8 rows × 32 columns per tile)
    s.vectorize(c, 3);
    s.compute_at(cl, c, 1);  // C.local: the 8×32 tile, per (io, jo)
    // C.local's loops cover what C needs at that point (bound inference): splitting them by the
    // tile's sizes leaves outer loops of one iteration and makes the vector width explicit.
    s.split(cl, 0, 8);               // io' ii' j k
    s.split(cl, 2, kTile);           // io' ii' jo' ji' k
    s.reorder(cl, {0, 2, 4, 1, 3});  // io' jo' k ii' ji'
    s.vectorize(cl, 4);
    if (unroll) s.unroll(cl, 3);
    if (parallel) s.parallel(c, 0);
}

}  // namespace

int run(int argc, char** argv) {
    bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
    const int64_t n = small ? 128 : 1024;
    Gemm g = define_gemm(n);
    NDArray a = NDArray::empty({n, n}, float32()), b = NDArray::empty({n, n}, float32()),
            c = NDArray::empty({n, n}, float32());
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (int64_t i = 0; i < n * n; ++i) {
        a.data_as<float>()[i] = dist(rng);
        b.data_as<float>()[i] = dist(rng);
    }

    using Step = std::function<void(Schedule&)>;
    const std::vector<std::pair<const char*, Step>> steps = {
        {"1 default schedule", [](Schedule&) {}},
        {"2 blocking", [&](Schedule& s) { block(s, s.stage_of(g.C)); }},
        {"3 loop permutation", [&](Schedule& s) { permute(s, s.stage_of(g.C)); }},
        {"4 vectorization", [&](Schedule& s) { vectorize(s, s.stage_of(g.C)); }},
        {"5 packing B",
         [&](Schedule& s) {
             pack_b(s, g, s.stage_of(g.C));
             vectorize(s, s.stage_of(g.C));
         }},
        {"6 write cache", [&](Schedule& s) { write_cache(s, g, false, false); }},
        {"7 unrolling", [&](Schedule& s) { write_cache(s, g, true, false); }},
        {"8 parallel", [&](Schedule& s) { write_cache(s, g, true, true); }},
        {"9 sized for this CPU", [&](Schedule& s) { schedule_gemm(s, g.B, g.C); }},
    };
    std::printf("GEMM %lld x %lld x %lld, float32\n", (long long)n, (long long)n, (long long)n);
    bool ok = true;
    for (const auto& [name, apply] : steps) {
        Schedule s = create_schedule({g.C});
        apply(s);
        // tuning_logs = false: step 1 is the loop nest as written, not the shipped tuning logs'
        // schedule for this GEMM (a schedule without steps is tessel's to choose otherwise).
        BuildOptions as_written;
        as_written.tuning_logs = false;
        Module m = build(s, {g.A, g.B, g.C}, "llvm", "gemm", as_written);
        Kernel kernel = m.get("gemm");
        std::memset(c.data(), 0, n * n * sizeof(float));
        kernel({a, b, c});
        std::string mismatch =
            check_gemm_sampled(n, a.data_as<float>(), b.data_as<float>(), c.data_as<float>(), 1024);
        bool correct = mismatch.empty();
        if (!correct) std::printf("  %s\n", mismatch.c_str());
        TimeEvaluatorOptions options;
        options.min_repeats = small ? 2 : 3;
        options.min_total_seconds = small ? 0.01 : 0.3;
        TimingResult r = time_evaluate([&](int) { kernel({a, b, c}); }, 1, options);
        double gflops = 2.0 * n * n * n / r.median / 1e9;
        std::printf("%-22s %8.2f GFLOP/s  %s\n", name, gflops, correct ? "correct" : "WRONG");
        if (name == steps.back().first)
            std::printf("\nthe last schedule:\n%s", s.to_python().c_str());
        ok = ok && correct;
    }
    return ok ? 0 : 1;
}

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tutorial_cpu_gemm: %s\n", e.what());
        return 2;
    }
}
