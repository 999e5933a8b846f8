// The GEMM schedule of the gemm_cpu benchmark.
#include "support/gemm_schedule.h"

#include "tessel/codegen/Build.h"
#include "tessel/te/Operation.h"

using namespace tessel;

Module build_gemm(int64_t n, const std::string& name) {
    Tensor A = placeholder({n, n}, Float(32), "A");
    Tensor B = placeholder({n, n}, Float(32), "B");
    IterVar k = reduce_axis(Range(0, n), "k");
    Tensor C = compute({n, n}, [&](Var i, Var j) { return sum(A(i, k.var()) * B(k.var(), j), {k}); },
                       "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    const int64_t mi = 8, nj = 32, kc = 256;
    s.split(c, 0, mi);                    // io ii j k
    s.split(c, 2, nj);                    // io ii jo ji k
    s.split(c, 4, kc);                    // io ii jo ji ko ki
    s.reorder(c, {0, 4, 2, 5, 1, 3});     // io ko jo ki ii ji
    s.vectorize(c, 5);
    s.unroll(c, 4);
    s.parallel(c, 0);
    return build(s, {A, B, C}, "llvm", name);
}
