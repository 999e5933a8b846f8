// Benchmark: how long build() — lower(), LLVM code generation, O3 and the ORC JIT — takes for a
// tiled, vectorized, unrolled, parallel 1024^3 matmul schedule (the auto-scheduler compiles
// thousands of candidates). Prints the cold figure (the first build in the process: LLVM's
// initialisation included) and the median of warm builds. Checks the built kernel first (a 64^3
// instance against the reference interpreter).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "tessel/HostArray.h"
#include "tessel/Tolerance.h"
#include "tessel/codegen/Build.h"
#include "tessel/runtime/NDArray.h"
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

NDArray view(HostArray& a) {
    return NDArray::from_external(a.data(), a.shape(), float32(), cpu(), nullptr);
}

bool check() {
    Matmul m = matmul(64);
    Module mod = build(tiled(m), {m.A, m.B, m.C});
    HostArray a = HostArray::random(Float(32), {64, 64}, 1),
              b = HostArray::random(Float(32), {64, 64}, 2);
    HostArray c(Float(32), {64, 64});
    mod.get("main")({view(a), view(b), view(c)});
    CompareResult r = compare_to_reference(c, evaluate_reference({m.C}, {{m.A, a}, {m.B, b}})[0],
                                           tolerance_for(Float(32), 64));
    if (!r.ok) std::printf("check failed: %s\n", r.message().c_str());
    return r.ok;
}

double build_ms(const Schedule& s, const Matmul& m) {
    auto t0 = std::chrono::steady_clock::now();
    Module mod = build(s, {m.A, m.B, m.C});
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main() {
    Matmul m = matmul(1024);
    Schedule s = tiled(m);
    double cold = build_ms(s, m);
    if (!check()) return 1;
    std::vector<double> ms;
    for (int rep = 0; rep < 25; ++rep) {
        double t = build_ms(s, m);
        if (rep >= 5) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    std::printf(
        "built a tiled, vectorized, unrolled, parallel 1024^3 matmul %zu times after 5 "
        "warm-up builds (lower + LLVM codegen + O3 + JIT, one thread); cold: %.1f ms\n",
        ms.size(), cold);
    std::printf("BENCH compile_latency matmul1024_tiled_cold ms=%.1f\n", cold);
    std::printf("BENCH compile_latency matmul1024_tiled ms=%.1f\n", ms[ms.size() / 2]);
    return 0;
}
