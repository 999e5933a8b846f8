// The final GEMM schedule of the C++ tutorial (cpu_gemm.cpp, step 9), measured by the gemm_cpu
// benchmark against oneDNN and OpenBLAS. Its sizes come from the CPU (Target's queries), so it
// holds on any CPU tessel runs on; it is the structure of op.matmul's default schedule
// (docs/operators.md, "Matrix products on CPUs").
//
// C[i, j] = sum_k A[i, k] * B[k, j], n×n float32, row-major:
// - C is computed in tiles of mr rows × nr columns (nr two vectors, mr as many rows as the
//   vector registers hold beside them: 12 × 32 with AVX-512, 6 × 16 with AVX2), accumulated in
//   a local buffer that LLVM keeps in registers across all of k, then copied out.
// - Columns are blocked by np panels of nr, so that the block of packed B (all k rows) takes a
//   quarter of L2; each block of B is packed (cache_read with blocked storage) into panels
//   [j / nr][k][nr] when its block starts, so the micro-kernel reads nr consecutive floats per k.
// - The column blocks run in parallel, each core packing and sweeping its own.
#include "gemm_schedule.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "tessel/Target.h"
#include "tessel/driver/Build.h"
#include "tessel/te/Operation.h"

using namespace tessel;

void schedule_gemm(Schedule& s, const Tensor& B, const Tensor& C) {
    const Target cpu = Target::host();
    const int64_t lanes = cpu.vector_lanes(Float(32)), k = *as_const_int(B.shape()[0]);
    const int64_t registers = lanes * 32 >= 512 ? 32 : 16;  // AVX-512 has 32, AVX2 16
    const int64_t nr = 2 * lanes, mr = std::min<int64_t>(12, (registers - 3) / 2);
    const int64_t np = std::clamp<int64_t>(cpu.l2_cache_bytes() / 4 / (k * nr * 4), 1, 8);
    // B's packed copy for C's computation, then C's local accumulator (C copies from it).
    int bp = s.cache_read(s.stage_of(B), "global", {s.stage_of(C)});
    int cl = s.cache_write(s.stage_of(C), "local");
    int c = cl + 1;
    // C: i j → io ii jo j1o ji → jo io j1o ii ji; the column blocks in parallel.
    s.split(c, 0, mr);
    s.split(c, 2, nr);
    s.split(c, 2, np);
    s.reorder(c, {2, 0, 3, 1, 4});
    s.vectorize(c, 4);
    s.parallel(c, 0);
    // The tile at C's panel loop: k outermost, the rows unrolled, the columns one vector each.
    s.reorder(cl, {2, 0, 1});
    s.vectorize(cl, 2);
    s.unroll(cl, 1);
    s.compute_at(cl, c, 2);
    // B packed per column block: storage [k][j] → [j / nr][k][nr], loops jo k ji.
    s.storage_split(bp, 1, nr);
    s.storage_reorder(bp, {1, 0, 2});
    s.split(bp, 1, nr);
    s.reorder(bp, {1, 0, 2});
    s.vectorize(bp, 2);
    s.compute_at(bp, c, 0);
}

Module build_gemm(int64_t n, const std::string& name) {
    Tensor A = placeholder({n, n}, Float(32), "A");
    Tensor B = placeholder({n, n}, Float(32), "B");
    IterVar k = reduce_axis(Range(0, n), "k");
    Tensor C = compute(
        {n, n}, [&](Var i, Var j) { return sum(A(i, k.var()) * B(k.var(), j), {k}); }, "C");
    Schedule s = create_schedule({C});
    schedule_gemm(s, B, C);
    return build(s, {A, B, C}, "llvm", name);
}

std::string check_gemm_sampled(int64_t n, const float* a, const float* b, const float* c,
                               int samples) {
    std::mt19937_64 rng(42);
    for (int t = 0; t < samples; ++t) {
        int64_t i = static_cast<int64_t>(rng() % n), j = static_cast<int64_t>(rng() % n);
        double acc = 0, magnitude = 0;
        for (int64_t k = 0; k < n; ++k) {
            double p = double(a[i * n + k]) * b[k * n + j];
            acc += p;
            magnitude += std::fabs(p);
        }
        if (std::fabs(c[i * n + j] - acc) > 1e-5 * magnitude + 1e-6) {
            return "C[" + std::to_string(i) + ", " + std::to_string(j) +
                   "] = " + std::to_string(c[i * n + j]) + ", expected " + std::to_string(acc);
        }
    }
    return "";
}
