// A shared-memory tiled GEMM schedule built from the DAG with explicit copy stages (no
// cache_read): C = A @ B with As and Bs in shared memory, computed at the k.outer loop inside the
// blockIdx loops, their loops bound to threadIdx. Used by the SPMD correctness test and by the
// error test that removes a barrier.
#pragma once

#include "tessel/ir/IROperator.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

namespace tessel::testing {

struct SharedGemm {
    Tensor A, B, As, Bs, C;
    Schedule s;
    /// n x m output, reduction k; tiles of `tile` x `tile` threads, k steps of `tile`.
    SharedGemm(int n, int m, int k, int tile) : s(make(n, m, k)) {
        int c = s.stage_of(C), as = s.stage_of(As), bs = s.stage_of(Bs);
        s.tile(c, 0, 1, tile, tile);  // io jo ii ji k
        s.split(c, 4, tile);          // io jo ii ji ko ki
        s.reorder(c, {0, 1, 4, 2, 3, 5});
        s.bind(c, 0, IterAnnotation::BlockY);
        s.bind(c, 1, IterAnnotation::BlockX);
        s.bind(c, 3, IterAnnotation::ThreadY);
        s.bind(c, 4, IterAnnotation::ThreadX);
        for (int st : {as, bs}) {
            s.set_scope(st, StorageScope::Shared);
            s.compute_at(st, c, 2);
            s.bind(st, 0, IterAnnotation::ThreadY);
            s.bind(st, 1, IterAnnotation::ThreadX);
        }
    }

private:
    Schedule make(int n, int m, int k) {
        A = placeholder({n, k}, Float(32), "A");
        B = placeholder({k, m}, Float(32), "B");
        As = compute(
            {n, k}, [&](Var i, Var kk) { return A(i, kk); }, "As");
        Bs = compute(
            {k, m}, [&](Var kk, Var j) { return B(kk, j); }, "Bs");
        IterVar r = reduce_axis({0, k}, "k");
        C = compute(
            {n, m}, [&](Var i, Var j) { return sum(As(i, r) * Bs(r, j), {r}); }, "C");
        return create_schedule({C});
    }
};

}  // namespace tessel::testing
