// Benchmark: how long lower() takes on a tiled, vectorized 1024^3 matmul schedule (the
// auto-scheduler lowers thousands of candidates a minute). Prints the median of many runs after
// warm-up, and checks the lowered program first (a 64^3 instance of the same schedule runs in
// the loop-IR interpreter against the reference interpreter).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "tessel/HostArray.h"
#include "tessel/Tolerance.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"
#include "tessel/te/Operation.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;

namespace {

struct Matmul {
    Tensor A, B, C;
};

Matmul matmul(int n) {
    Matmul m;
    m.A = placeholder({n, n}, Float(32), "A");
    m.B = placeholder({n, n}, Float(32), "B");
    IterVar k = reduce_axis(Range(0, n), "k");
    m.C = compute(
        {n, n}, [&](Var i, Var j) { return sum(m.A(i, k) * m.B(k, j), {k}); }, "C");
    return m;
}

// Tiles 32x32 with 8-wide vectors, the k loop split by 4 and unrolled, the outer loop parallel.
Schedule tiled(const Matmul& m) {
    Schedule s = create_schedule({m.C});
    int c = s.stage_of(m.C);
    s.tile(c, 0, 1, 32, 32);              // io jo ii ji k
    s.split(c, 3, 8);                     // io jo ii jio jii k
    s.split(c, 5, 4);                     // io jo ii jio jii ko ki
    s.reorder(c, {0, 1, 5, 2, 6, 3, 4});  // io jo ko ii ki jio jii
    s.vectorize(c, 6);
    s.unroll(c, 4);
    s.parallel(c, 0);
    return s;
}

bool check(const LowerOptions& options) {
    Matmul m = matmul(64);
    LoweredFunc f = lower(tiled(m), {m.A, m.B, m.C}, "main", options);
    if (LowerOptions::from_env().debug > 0) std::printf("%s\n", to_string(f).c_str());
    HostArray a = HostArray::random(Float(32), {64, 64}, 1),
              b = HostArray::random(Float(32), {64, 64}, 2);
    HostArray c(Float(32), {64, 64});
    run_lowered(f, {&a, &b, &c});
    CompareResult r = compare_to_reference(c, evaluate_reference({m.C}, {{m.A, a}, {m.B, b}})[0],
                                           tolerance_for(Float(32), 64));
    if (!r.ok) std::printf("check failed: %s\n", r.message().c_str());
    return r.ok;
}

}  // namespace

int main() {
    LowerOptions options;  // no logging, no bounds checks: the tuner's setting
    if (!check(options)) return 1;
    Matmul m = matmul(1024);
    Schedule s = tiled(m);
    std::vector<double> ms;
    for (int rep = 0; rep < 60; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        LoweredFunc f = lower(s, {m.A, m.B, m.C}, "main", options);
        double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                       .count();
        if (rep >= 10) ms.push_back(t);  // the first runs warm caches and the allocator
    }
    std::sort(ms.begin(), ms.end());
    std::printf(
        "lowered a tiled, vectorized, unrolled 1024^3 matmul %zu times after 10 warm-up runs\n",
        ms.size());
    std::printf("BENCH lower_latency matmul1024_tiled ms=%.3f\n", ms[ms.size() / 2]);
    return 0;
}
