// GPU corpus programs: cross-thread reductions (sum, max, min, argmax), rfactor feeding a
// cross-thread reduction, softmax (see GpuScheduleCorpus.h). Most are the schedules of
// tests/correctness/schedule_cross_thread_reduction_test.cpp and spmd_softmax_test.cpp.
#include "common/Builders.h"
#include "gpu/GpuCorpusParts.h"
#include "tessel/ir/IROperator.h"
#include "tessel/te/Operation.h"

namespace tessel::testing::corpus {

namespace {

enum class Kind { Sum, Max, Min };

// R(i) = reduce over k of X(i, k): one block per row, `threads` threads sharing each row.
GpuProgram row_reduction(const char* name, Kind kind, int n, int m, int threads) {
    Tensor X = placeholder({n, m}, Float(32), "X");
    IterVar k = reduce_axis({0, m}, "k");
    Tensor R = compute(
        {n},
        [&](Var i) {
            Expr v = X(i, k);
            return kind == Kind::Sum ? sum(v, {k}) : kind == Kind::Max ? max(v, {k}) : min(v, {k});
        },
        "R");
    Schedule s = create_schedule({R});
    int r = s.stage_of(R);
    s.bind(r, 0, kBx);
    s.split(r, 1, threads);  // i ko ki
    s.bind(r, 2, kTx);
    return gpu_program(name, s, m);
}

}  // namespace

GpuProgram cross_thread_sum() {
    return row_reduction("cross_thread_sum", Kind::Sum, 5, 64, 16);
}

GpuProgram cross_thread_sum_partial() {  // 50 = 3*16 + 2: guarded shares
    return row_reduction("cross_thread_sum_partial", Kind::Sum, 3, 50, 16);
}

GpuProgram cross_thread_max() {
    return row_reduction("cross_thread_max", Kind::Max, 4, 40, 8);
}

GpuProgram cross_thread_min() {  // every point on its own thread, a group of 24 (not a power of 2)
    return row_reduction("cross_thread_min", Kind::Min, 4, 24, 24);
}

GpuProgram cross_thread_two_axes() {  // reduction over threadIdx.y and threadIdx.x, spatial z
    Tensor X = placeholder({8, 6, 32}, Float(32), "X");
    IterVar k = reduce_axis({0, 6}, "k"), l = reduce_axis({0, 32}, "l");
    Tensor R = compute(
        {8},
        [&](Var i) {
            return sum(X(i, k, l), {k, l});
        },
        "R");
    Schedule s = create_schedule({R});
    int r = s.stage_of(R);
    s.split(r, 0, 2);  // io ii k l
    s.bind(r, 0, kBx);
    s.bind(r, 1, kTz);
    s.bind(r, 2, kTy);
    s.split(r, 3, 8);  // io ii k lo li
    s.bind(r, 4, kTx);
    return gpu_program("cross_thread_two_axes", s, 6 * 32);
}

GpuProgram cross_thread_argmax() {  // many ties: the lowest index must win across threads too
    const int n = 6, m = 48;
    Tensor X = placeholder({n, m}, Float(32), "X");
    IterVar k = reduce_axis({0, m}, "k");
    std::vector<Tensor> r = compute_multi(
        {n}, [&](Var i) { return argmax(k.var(), X(i, k), {k}); }, "argmax");
    Schedule s = create_schedule(r);
    int st = s.stage_of(r[0]);
    s.bind(st, 0, kBx);
    s.split(st, 1, 16);
    s.bind(st, 2, kTx);
    GpuProgram p = gpu_program("cross_thread_argmax", s, m);
    p.integer_valued_inputs = true;
    return p;
}

GpuProgram cross_thread_result_in_shared() {  // row sums in shared memory, read by every thread
    Tensor X = placeholder({4, 32}, Float(32), "X");
    IterVar k = reduce_axis({0, 32}, "k");
    Tensor S = compute(
        {4}, [&](Var i) { return sum(X(i, k), {k}); }, "S");
    Tensor Y = compute(
        {4, 32}, [&](Var i, Var j) { return X(i, j) / S(i); }, "Y");
    Schedule s = create_schedule({Y});
    int ss = s.stage_of(S), y = s.stage_of(Y);
    s.bind(y, 0, kBx);
    s.bind(y, 1, kTx);
    s.compute_at(ss, y, 0);
    s.set_scope(ss, StorageScope::Shared);
    s.bind(ss, 1, kTx);
    // Random row sums can come close to zero: integer-valued inputs keep the quotients tame.
    GpuProgram p = gpu_program("cross_thread_result_in_shared", s, 32);
    p.integer_valued_inputs = true;
    return p;
}

GpuProgram rfactor_cross_thread() {  // TVM's rfactor tutorial: partial sums per thread, then an
                                     // all-reduce over the threads
    const int n = 8, m = 200, threads = 32;
    Tensor X = placeholder({n, m}, Float(32), "X");
    IterVar k = reduce_axis({0, m}, "k");
    Tensor R = compute(
        {n}, [&](Var i) { return sum(X(i, k), {k}); }, "R");
    Schedule s = create_schedule({R});
    int r = s.stage_of(R);
    s.split(r, 1, threads);       // i ko ki (200 = 6*32 + 8)
    int rf = s.rfactor(r, 2, 1);  // R.rf[i, ki] = sum over ko; R sums over ki
    r = s.stage_of(R);
    s.bind(r, 0, kBx);
    s.bind(r, 1, kTx);  // the cross-thread reduction over ki
    s.compute_at(rf, r, 1);
    s.set_scope(rf, StorageScope::Local);
    return gpu_program("rfactor_cross_thread", s, m);
}

GpuProgram softmax_block_per_row() {  // spmd_softmax_test.cpp
    const int n = 6, m = 40, threads = 16;
    Schedule s = Softmax(n, m).block_per_row_schedule(threads);
    return gpu_program("softmax_block_per_row", s, m);
}

}  // namespace tessel::testing::corpus
