// The computations the tests build again and again, written once: a 2-D matmul, a softmax as four
// computes, and the softmax's one-block-per-row GPU schedule. Operators a test only consumes come
// from the operator library (tessel/op/); these stay hand-written because the tests address
// their stages and axes by name (the error messages name "C", "k", "i1") or need the
// four-compute structure.
#pragma once

#include "tessel/ir/IROperator.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

namespace tessel::testing {

/// C (n × m, stage "C") = A (n × k, "A") · B (k × m, "B"), summed over the reduction axis "k";
/// C's loops are i0, i1 and k.
struct Matmul {
    Tensor A, B, C;
    Matmul(int n, int m, int k) {
        A = placeholder({n, k}, Float(32), "A");
        B = placeholder({k, m}, Float(32), "B");
        IterVar kk = reduce_axis(Range(0, k), "k");
        C = compute(
            {n, m}, [&](Var i, Var j) { return sum(A(i, kk) * B(kk, j), {kk}); }, "C");
    }
};

/// Row softmax of X (n × m, "X") as four computes: M (the row max over "k1"), E = exp(X - M),
/// S (the row sum of E over "k2") and Y = E / S.
struct Softmax {
    Tensor X, M, E, S, Y;
    Softmax(int n, int m) {
        X = placeholder({n, m}, Float(32), "X");
        IterVar k1 = reduce_axis({0, m}, "k1"), k2 = reduce_axis({0, m}, "k2");
        M = compute(
            {n}, [&](Var i) { return max(X(i, k1), {k1}); }, "M");
        E = compute(
            {n, m}, [&](Var i, Var j) { return exp(X(i, j) - M(i)); }, "E");
        S = compute(
            {n}, [&](Var i) { return sum(E(i, k2), {k2}); }, "S");
        Y = compute(
            {n, m}, [&](Var i, Var j) { return E(i, j) / S(i); }, "Y");
    }

    /// One block per row and `threads` threads: E inlined, the row max and sum computed in shared
    /// memory at the row's block loop as cross-thread reductions, Y's columns over the threads.
    Schedule block_per_row_schedule(int threads) const {
        Schedule s = create_schedule({Y});
        int mm = s.stage_of(M), e = s.stage_of(E), ss = s.stage_of(S), y = s.stage_of(Y);
        s.compute_inline(e);
        s.bind(y, 0, IterAnnotation::BlockX);
        s.split(y, 1, threads);  // i jo ji
        s.bind(y, 2, IterAnnotation::ThreadX);
        for (int st : {ss, mm}) {  // S first: M is read by S too
            s.compute_at(st, y, 0);
            s.set_scope(st, StorageScope::Shared);
            s.split(st, 1, threads);  // i ko ki
            s.bind(st, 2, IterAnnotation::ThreadX);
        }
        return s;
    }
};

/// Split-K as one GPU kernel: Y (40 x 24, "Y") = (A (40 x 96) · B (96 x 24)) * 0.5, the product
/// C's reduction in `parts` parts (rfactor: P[part, i, j], stage p), P's 8 x 8 tiles over blocks
/// of 8 x 8 threads (persistent when `blocks` > 0: that many blocks walk the tiles in turn), Y
/// computed after each of P's tiles (reverse_compute_at) by the last block to finish it, C's sum
/// over the parts per element inside Y.
struct SplitKProduct {
    Tensor A = placeholder({40, 96}, Float(32), "A");
    Tensor B = placeholder({96, 24}, Float(32), "B");
    Tensor C = product(A, B);
    Tensor Y = compute(
        {40, 24}, [&](Var i, Var j) { return C(i, j) * 0.5f; }, "Y");
    Schedule s = create_schedule({Y});
    int p = 0, c = 0, y = 0;  // stages
    static Tensor product(const Tensor& a, const Tensor& b) {
        IterVar k = reduce_axis({0, 96}, "k");
        return compute(
            {40, 24}, [&](Var i, Var j) { return sum(a(i, k) * b(k, j), {k}); }, "C");
    }
    SplitKProduct(int parts, int blocks) {
        s.split(s.stage_of(C), 2, 96 / parts);  // C: i, j, k.outer, k.inner
        p = s.rfactor(s.stage_of(C), 2, 0);     // P[part, i, j] over k.inner
        c = p + 1;
        y = s.stage_of(Y);
        s.split(p, 1, 8);  // part, i.o, i.i, j, k
        s.split(p, 3, 8);  // part, i.o, i.i, j.o, j.i, k
        s.reorder(p, {0, 1, 3, 2, 4, 5});
        int tile = s.fuse(p, {0, 1, 2});  // tile, i.i, j.i, k
        if (blocks > 0) {
            s.split(p, tile, blocks);  // tile.outer (serial), the block
            s.reorder(p, {1, 0, 2, 3, 4});
            s.bind(p, 0, IterAnnotation::BlockX);
            tile = 1;
        } else {
            s.bind(p, 0, IterAnnotation::BlockX);
        }
        s.bind(p, tile + 1, IterAnnotation::ThreadY);
        s.bind(p, tile + 2, IterAnnotation::ThreadX);
        s.reverse_compute_at(y, p, tile);
        s.bind(y, 0, IterAnnotation::ThreadY);
        s.bind(y, 1, IterAnnotation::ThreadX);
        s.compute_at(c, y, 1);
    }
};

}  // namespace tessel::testing
