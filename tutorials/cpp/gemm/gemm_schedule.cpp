// The final GEMM schedule of the C++ tutorial (cpu_gemm.cpp, step 9), measured by the gemm_cpu
// benchmark against oneDNN and OpenBLAS.
//
// C[i, j] = sum_k A[i, k] * B[k, j], n×n float32, row-major:
// - B is packed (cache_read with blocked storage) into column panels Bp[j / 32][k][32], so the
//   micro-kernel reads 32 consecutive floats per k instead of striding over rows of B; the packing
//   runs inside the call, in parallel, vectorized.
// - C is computed in tiles of 8 rows × 32 columns that stay in vector registers while k runs over
//   a block of 128 (LLVM keeps the tile in registers: tessel's alias scopes prove C disjoint from
//   A and B); the 8×128 block of A stays in L1.
// - Columns are blocked by 16 panels (512 columns), so the 128×512 slice of packed B that a row of
//   tiles sweeps stays in L2; rows of tiles run in parallel inside a column block.
#include "gemm_schedule.h"

#include <cmath>
#include <random>

#include "tessel/driver/Build.h"
#include "tessel/te/Operation.h"

using namespace tessel;

namespace {

constexpr int64_t kRows = 8, kCols = 32, kDepth = 128, kPanels = 16;

}  // namespace

void schedule_gemm(Schedule& s, const Tensor& B, const Tensor& C) {
    int c = s.stage_of(C);
    // Pack B into column panels: storage [k][j] -> [j / 32][k][32].
    int bp = s.cache_read(s.stage_of(B), "global", {c});
    c = s.stage_of(C);
    s.storage_split(bp, 1, kCols);
    s.storage_reorder(bp, {1, 0, 2});
    s.split(bp, 1, kCols);     // k jo ji
    s.reorder(bp, {1, 0, 2});  // jo k ji
    s.vectorize(bp, 2);
    s.parallel(bp, 0);
    // The register-blocked product.
    s.split(c, 0, kRows);                 // io ii j k
    s.split(c, 2, kCols * kPanels);       // io ii jo j1 k
    s.split(c, 3, kCols);                 // io ii jo j1o j1i k
    s.split(c, 5, kDepth);                // io ii jo j1o j1i ko ki
    s.reorder(c, {2, 0, 5, 3, 6, 1, 4});  // jo io ko j1o ki ii j1i
    s.vectorize(c, 6);
    s.unroll(c, 5);
    s.parallel(c, 1);
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
