// The 1024^3 GEMM search state the search benchmarks time (search_primitives, cost_model): the
// steps Ansor's CPU sketch makes for an n^3 GEMM (a local write cache tiled SSRSRS, the output
// tiled to match with follow_split and the cache computed there, fused parallel outer loops,
// vectorised and unrolled inner loops, an auto-unroll pragma), with tile sizes for n, and its
// check on a 64^3 instance in the loop-IR interpreter against the reference interpreter.
#pragma once

#include <cstdio>
#include <vector>

#include "tessel/HostArray.h"
#include "tessel/Tolerance.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"
#include "tessel/te/Operation.h"
#include "tessel/te/ReferenceInterpreter.h"

namespace tessel::bench {

struct Gemm {
    Tensor A, B, C;
};

inline Gemm gemm(int n) {
    Gemm g;
    g.A = placeholder({n, n}, Float(32), "A");
    g.B = placeholder({n, n}, Float(32), "B");
    IterVar k = reduce_axis(Range(0, n), "k");
    g.C = compute(
        {n, n}, [&](Var i, Var j) { return sum(g.A(i, k) * g.B(k, j), {k}); }, "C");
    return g;
}

/// The state's steps for an n^3 GEMM (n a power of two >= 64): 20 steps.
inline std::vector<Step> gemm_state(const Gemm& g, int n) {
    Schedule s = create_schedule({g.C});
    int cl = s.cache_write(s.stage_of(g.C), "local"), c = cl + 1;  // C.local = 2, C = 3
    int first = static_cast<int>(s.steps().size());
    s.split(cl, 0, n / 8), s.split(cl, 1, 8), s.split(cl, 2, 2);    // i0 i1 i2 i3
    s.split(cl, 4, n / 4), s.split(cl, 5, 64), s.split(cl, 6, 16);  // j0 j1 j2 j3
    s.split(cl, 8, 4);                                              // k0 k1
    s.reorder(cl, {0, 4, 1, 5, 8, 2, 6, 9, 3, 7});                  // SSRSRS
    // C: tiled like C.local's outermost level, C.local computed at it.
    s.follow_split(c, 0, first);
    s.follow_split(c, 2, first + 3);
    s.reorder(c, {0, 2, 1, 3});
    s.compute_at(cl, c, 1);
    s.parallel(c, s.fuse(c, {0, 1}));
    s.split(c, 2, 16);
    s.vectorize(c, 3);
    s.vectorize(cl, 9);
    s.unroll(cl, 8);
    s.pragma_auto_unroll(cl, 64);
    return s.steps();
}

/// The state at n = 64 in the loop-IR interpreter against the reference; prints why not.
inline bool check_gemm_state() {
    Gemm g = gemm(64);
    LoweredFunc f = lower(replay({g.C}, gemm_state(g, 64)), {g.A, g.B, g.C}, "main", {});
    HostArray a = HostArray::random(Float(32), {64, 64}, 1),
              b = HostArray::random(Float(32), {64, 64}, 2), c(Float(32), {64, 64});
    run_lowered(f, {&a, &b, &c});
    CompareResult r = compare_to_reference(c, evaluate_reference({g.C}, {{g.A, a}, {g.B, b}})[0],
                                           tolerance_for(Float(32), 64));
    if (!r.ok) std::printf("check failed: %s\n", r.message().c_str());
    return r.ok;
}

}  // namespace tessel::bench
