// Loop-IR interpreter: hand-built lowered IR (flat and multi-dimensional), compared with the
// reference interpreter or with values worked out by hand.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "tessel/Tolerance.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/te/Operation.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;

namespace {

Expr ld(const Buffer& b, Expr index) {
    const Type t = b.dtype().with_lanes(index.type().lanes);
    return Load::make(t, b->data, std::move(index));
}

Stmt st(const Buffer& b, Expr value, Expr index, Expr predicate = Expr()) {
    return Store::make(b->data, std::move(value), std::move(index), std::move(predicate));
}

Stmt loop(const Var& v, int extent, Stmt body, ForKind kind = ForKind::Serial) {
    return For::make(v, 0, extent, kind, std::move(body));
}

/// Another view of `b`'s storage.
Buffer buffer_view(const Buffer& b, const std::string& name, std::vector<Expr> shape,
                   std::vector<Expr> strides, int elem_offset) {
    auto* n = new BufferNode();
    n->data = b->data;
    n->dtype = b.dtype();
    n->shape = std::move(shape);
    n->strides = std::move(strides);
    n->elem_offset = make_const(Int(32), elem_offset);
    n->name = name;
    return Buffer(n);
}

/// C = A x B (n x k times k x m) as lowering would emit it after flattening: a local
/// one-element accumulator per output element.
LoweredFunc flat_matmul(const Buffer& A, const Buffer& B, const Buffer& C, int n, int m, int k) {
    Var i("i"), j("j"), r("r");
    Var acc("acc", Handle());
    Type f32 = Float(32);
    Stmt update =
        Store::make(acc, Load::make(f32, acc, 0) + ld(A, i * k + r) * ld(B, r * m + j), 0);
    Stmt body = Seq::make({Store::make(acc, make_zero(f32), 0), loop(r, k, update),
                           st(C, Load::make(f32, acc, 0), i * m + j)});
    body = Allocate::make(acc, f32, {1}, StorageScope::Local, body);
    return LoweredFunc{"matmul", {A, B, C}, loop(i, n, loop(j, m, body))};
}

/// The te matmul on the same inputs, through the reference interpreter.
HostArray reference_matmul(const HostArray& a, const HostArray& b, int n, int m, int k) {
    Tensor TA = placeholder({n, k}, Float(32), "A");
    Tensor TB = placeholder({k, m}, Float(32), "B");
    IterVar r = reduce_axis({0, k}, "r");
    Tensor TC = compute(
        {n, m}, [&](Var i, Var j) { return sum(TA(i, r) * TB(r, j), {r}); }, "C");
    return evaluate_reference({TC}, {{TA, a}, {TB, b}})[0];
}

}  // namespace

TEST(LoopInterpreter, FlatMatmulMatchesReference) {
    const int n = 13, m = 7, k = 29;
    Buffer A("A", Float(32), {n, k}), B("B", Float(32), {k, m}), C("C", Float(32), {n, m});
    HostArray a = HostArray::random(Float(32), {n, k}, 1);
    HostArray b = HostArray::random(Float(32), {k, m}, 2);
    HostArray c(Float(32), {n, m});
    run_lowered(flat_matmul(A, B, C, n, m, k), {&a, &b, &c});
    EXPECT_CLOSE_TO_REFERENCE(c, reference_matmul(a, b, n, m, k), tolerance_for(Float(32), k));
}

TEST(LoopInterpreter, Matmul64) {
    const int n = 64;
    Buffer A("A", Float(32), {n, n}), B("B", Float(32), {n, n}), C("C", Float(32), {n, n});
    HostArray a = HostArray::random(Float(32), {n, n}, 3);
    HostArray b = HostArray::random(Float(32), {n, n}, 4);
    HostArray c(Float(32), {n, n});
    run_lowered(flat_matmul(A, B, C, n, n, n), {&a, &b, &c});
    EXPECT_CLOSE_TO_REFERENCE(c, reference_matmul(a, b, n, n, n), tolerance_for(Float(32), n));
}

TEST(LoopInterpreter, VectorizedElementwiseWithPredicatedTail) {
    // C[0:10] = A + B * 2 in vectors of 4; the last vector's lanes 10, 11 are masked off.
    const int n = 10, w = 4;
    Buffer A("A", Float(32), {n}), B("B", Float(32), {n}), C("C", Float(32), {n});
    Var io("io");
    Expr idx = Ramp::make(io * w, 1, w);
    Expr pred = LT::make(idx, Broadcast::make(n, w));
    Expr value = Load::make(Float(32, w), A->data, idx, pred) +
                 Load::make(Float(32, w), B->data, idx, pred) * Broadcast::make(2.0f, w);
    LoweredFunc f{"axpy", {A, B, C}, loop(io, (n + w - 1) / w, st(C, value, idx, pred))};
    HostArray a = HostArray::random(Float(32), {n}, 5), b = HostArray::random(Float(32), {n}, 6);
    HostArray c(Float(32), {n});
    run_lowered(f, {&a, &b, &c});
    for (int x = 0; x < n; ++x)
        EXPECT_EQ(c.get(x), static_cast<float>(a.get(x) + static_cast<float>(b.get(x) * 2)));
}

TEST(LoopInterpreter, MaskedStoreLanesDoNotWrite) {
    // Lanes 1 and 3 are off: their elements keep what was there.
    Buffer C("C", Int(32), {4});
    Expr pred =
        EQ::make(FloorMod::make(Ramp::make(0, 1, 4), Broadcast::make(2, 4)), Broadcast::make(0, 4));
    LoweredFunc f{"mask", {C}, st(C, Broadcast::make(7, 4), Ramp::make(0, 1, 4), pred)};
    HostArray c = HostArray::full(Int(32), {4}, -1);
    run_lowered(f, {&c});
    EXPECT_EQ(c.get_int(0), 7);
    EXPECT_EQ(c.get_int(1), -1);
    EXPECT_EQ(c.get_int(2), 7);
    EXPECT_EQ(c.get_int(3), -1);
}

TEST(LoopInterpreter, GuardedVectorLoadSkipsOutOfBoundsLanes) {
    // C (12 elements) = A (10 elements) padded with zeros: the guard masks A's lanes 10 and 11.
    Buffer A("A", Float(32), {10}), C("C", Float(32), {12});
    Var io("io");
    Expr idx = Ramp::make(io * 4, 1, 4);
    Expr guarded =
        if_then_else(LT::make(idx, Broadcast::make(10, 4)), ld(A, idx), Broadcast::make(0.0f, 4));
    LoweredFunc f{"pad", {A, C}, loop(io, 3, st(C, guarded, idx))};
    HostArray a = HostArray::random(Float(32), {10}, 7);
    HostArray c(Float(32), {12});
    run_lowered(f, {&a, &c});
    for (int x = 0; x < 12; ++x) EXPECT_EQ(c.get(x), x < 10 ? a.get(x) : 0.0) << x;
}

TEST(LoopInterpreter, BufferLoadStoreMultiDimensional) {
    // B[j, i] = A[i, j] * 2, before flattening.
    Buffer A("A", Int(32), {3, 4}), B("B", Int(32), {4, 3});
    Var i("i"), j("j");
    Stmt body = BufferStore::make(B, BufferLoad::make(A, {i, j}) * 2, {j, i});
    LoweredFunc f{"transpose", {A, B}, loop(i, 3, loop(j, 4, body))};
    HostArray a = HostArray::random(Int(32), {3, 4}, 8), b(Int(32), {4, 3});
    run_lowered(f, {&a, &b});
    for (int x = 0; x < 3; ++x)
        for (int y = 0; y < 4; ++y) EXPECT_EQ(b.at({y, x}), 2 * a.at({x, y}));
}

TEST(LoopInterpreter, BufferStridesAndOffset) {
    // A transposed view of B's storage (strides {1, 4}) and a view of A skipping its first row.
    Buffer A("A", Float(32), {3, 4}), B("B", Float(32), {4, 3});
    Buffer view = buffer_view(B, "Bt", {3, 4}, {1, 3}, 0);
    Buffer tail = buffer_view(A, "A_tail", {2, 4}, {}, 4);
    Var i("i"), j("j");
    Stmt copy = BufferStore::make(view, BufferLoad::make(A, {i, j}), {i, j});
    Stmt shift = BufferStore::make(B, BufferLoad::make(tail, {i, j}), {j, i});
    LoweredFunc f{"views", {A, B}, loop(i, 3, loop(j, 4, copy))};
    HostArray a = HostArray::random(Float(32), {3, 4}, 9), b(Float(32), {4, 3});
    run_lowered(f, {&a, &b});
    for (int x = 0; x < 3; ++x)
        for (int y = 0; y < 4; ++y) EXPECT_EQ(b.at({y, x}), a.at({x, y}));
    f.body = loop(i, 2, loop(j, 4, shift));
    run_lowered(f, {&a, &b});
    for (int x = 0; x < 2; ++x)
        for (int y = 0; y < 4; ++y) EXPECT_EQ(b.at({y, x}), a.at({x + 1, y}));
}

TEST(LoopInterpreter, VectorBufferLoadGathersPerLane) {
    // out[0:4] = M[ramp, 1]: a column of M read as one vector (a strided gather).
    Buffer M("M", Int(32), {4, 3}), O("O", Int(32), {4});
    Expr rows = Ramp::make(0, 1, 4);
    LoweredFunc f{
        "column",
        {M, O},
        BufferStore::make(O, BufferLoad::make(M, {rows, make_const(Int(32), 1)}), {rows})};
    HostArray m = HostArray::random(Int(32), {4, 3}, 10), o(Int(32), {4});
    run_lowered(f, {&m, &o});
    for (int x = 0; x < 4; ++x) EXPECT_EQ(o.get_int(x), m.at({x, 1}));
}

TEST(LoopInterpreter, Float16RoundsAfterEveryOperation) {
    // (1 + 2^-11) + 2^-11 in float16: each add is a tie that rounds to even, back to 1; the
    // ideal sum 1 + 2^-10 is representable. The reference interpreter gives the ideal value.
    Buffer X("X", Float(16), {3}), Y("Y", Float(16), {1});
    LoweredFunc f{"sum3", {X, Y}, st(Y, ld(X, 0) + ld(X, 1) + ld(X, 2), 0)};
    HostArray x =
        HostArray::from_values(Float(16), {3}, {1.0, std::ldexp(1, -11), std::ldexp(1, -11)});
    HostArray y(Float(16), {1});
    run_lowered(f, {&x, &y});
    EXPECT_EQ(y.get(0), 1.0);

    Tensor TX = placeholder({3}, Float(16), "X");
    Tensor TY = compute(
        {1}, [&](Var) { return TX(0) + TX(1) + TX(2); }, "Y");
    HostArray ideal = evaluate_reference({TY}, {{TX, x}})[0];
    EXPECT_EQ(ideal.get(0), 1.0 + std::ldexp(1, -10));
    EXPECT_CLOSE_TO_REFERENCE(y, ideal, tolerance_for(Float(16)));
}

TEST(LoopInterpreter, Float16MultiplyRoundsToHalf) {
    // 1.1 * 1.1 in float16: operands round to 1.0996, the product 1.2090... rounds to 1.209.
    Buffer X("X", Float(16), {1}), Y("Y", Float(16), {1});
    LoweredFunc f{"square", {X, Y}, st(Y, ld(X, 0) * ld(X, 0), 0)};
    HostArray x = HostArray::from_values(Float(16), {1}, {1.1}), y(Float(16), {1});
    run_lowered(f, {&x, &y});
    double h = x.get(0);
    EXPECT_EQ(y.get(0), round_to_float_type(h * h, Float(16)));
    EXPECT_NE(y.get(0), h * h);
}

TEST(LoopInterpreter, Int8Wraps) {
    Buffer A("A", Int(8), {2}), B("B", Int(8), {2});
    Var i("i");
    LoweredFunc f{"wrap", {A, B}, loop(i, 2, st(B, ld(A, i) + ld(A, i), i))};
    HostArray a = HostArray::from_values(Int(8), {2}, {100, -100}), b(Int(8), {2});
    run_lowered(f, {&a, &b});
    EXPECT_EQ(b.get_int(0), -56);
    EXPECT_EQ(b.get_int(1), 56);
}

TEST(LoopInterpreter, LetAssertAndIf) {
    // B[i] = (x = 3 * i) < 6 ? x : -1, asserting i < 4 on the way.
    Buffer B("B", Int(32), {4});
    Var i("i"), x("x");
    Stmt body = IfThenElse::make(x < 6, st(B, x, i), st(B, make_const(Int(32), -1), i));
    body = Seq::make({AssertStmt::make(i < 4, "i in range"), LetStmt::make(x, i * 3, body)});
    LoweredFunc f{"let", {B}, loop(i, 4, body)};
    HostArray b(Int(32), {4});
    run_lowered(f, {&b});
    EXPECT_EQ(b.get_int(0), 0);
    EXPECT_EQ(b.get_int(1), 3);
    EXPECT_EQ(b.get_int(2), -1);
    EXPECT_EQ(b.get_int(3), -1);
}

TEST(LoopInterpreter, AttrBarrierAndThreadBoundLoopsRun) {
    Buffer B("B", Int(32), {8});
    Var tx("tx"), v("v");
    Stmt body =
        Seq::make({Evaluate::make(Call::make(Intrinsic::thread_barrier, {})), st(B, tx * 10, tx)});
    body = AttrStmt::make("pragma_test", make_const(Int(32), 1), body);
    Stmt s = For::make(tx, 0, 8, ForKind::ThreadBound, body, "threadIdx.x");
    LoweredFunc f{"threads", {B}, s};
    HostArray b(Int(32), {8});
    run_lowered(f, {&b});
    for (int k = 0; k < 8; ++k) EXPECT_EQ(b.get_int(k), 10 * k);
}

TEST(LoopInterpreter, ParallelLoopsWithPrivateScratchAreNotRaces) {
    // Each iteration allocates its own scratch inside the loop: not shared, not a race; the
    // output elements are disjoint.
    Buffer A("A", Float(32), {8}), C("C", Float(32), {8});
    Var i("i"), tmp("tmp", Handle());
    Stmt body = Seq::make(
        {Store::make(tmp, ld(A, i) * 3.0f, 0), st(C, Load::make(Float(32), tmp, 0) + 1.0f, i)});
    body = Allocate::make(tmp, Float(32), {1}, StorageScope::Local, body);
    LoweredFunc f{"par", {A, C}, loop(i, 8, body, ForKind::Parallel)};
    HostArray a = HostArray::random(Float(32), {8}, 11), c(Float(32), {8});
    run_lowered(f, {&a, &c});
    for (int k = 0; k < 8; ++k)
        EXPECT_EQ(c.get(k), static_cast<float>(static_cast<float>(a.get(k) * 3) + 1.0f));
}

TEST(LoopInterpreter, RaceCheckCanBeTurnedOff) {
    Buffer C("C", Int(32), {1});
    Var i("i");
    LoweredFunc f{"last", {C}, loop(i, 4, st(C, i, 0), ForKind::Parallel)};
    HostArray c(Int(32), {1});
    LoopInterpreterOptions opts;
    opts.check_parallel_races = false;
    run_lowered(f, {&c}, opts);
    EXPECT_EQ(c.get_int(0), 3);
}

TEST(LoopInterpreter, UninitialisedAllocationReadsPoison) {
    // Nothing writes tmp: its floats read as NaN and its int32s as 0x5A5A5A5A, never 0.
    Buffer F("F", Float(32), {4}), I("I", Int(32), {4});
    Var i("i"), tf("tf", Handle()), ti("ti", Handle());
    Stmt body =
        Seq::make({st(F, Load::make(Float(32), tf, i), i), st(I, Load::make(Int(32), ti, i), i)});
    body = Allocate::make(tf, Float(32), {2, 2}, StorageScope::Shared,
                          Allocate::make(ti, Int(32), {4}, StorageScope::Global, loop(i, 4, body)));
    LoweredFunc f{"poison", {F, I}, body};
    HostArray fa = HostArray::full(Float(32), {4}, 0), ia = HostArray::full(Int(32), {4}, 0);
    run_lowered(f, {&fa, &ia});
    for (int k = 0; k < 4; ++k) {
        EXPECT_TRUE(std::isnan(fa.get(k)));
        EXPECT_EQ(ia.get_int(k), 0x5a5a5a5a);
    }
}

TEST(LoopInterpreter, RunStmtBindsBufferVariablesAndScalars) {
    Var data("data", Handle()), n("n"), i("i");
    Stmt s = For::make(i, 0, n, ForKind::Serial,
                       Store::make(data, Load::make(Int(64), data, i) * make_const(Int(64), 2), i));
    HostArray a = HostArray::from_values(Int(64), {5}, {1, 2, 3, 4, 5});
    run_stmt(s, {{data, &a}}, {{n, Value::make_int(Int(32), 3)}});
    EXPECT_EQ(a.get_int(0), 2);
    EXPECT_EQ(a.get_int(2), 6);
    EXPECT_EQ(a.get_int(3), 4);  // beyond n: untouched
}

TEST(LoopInterpreter, SymbolicExtentsBindToArguments) {
    Var n("n");
    Buffer A("A", Float(32), {n}), B("B", Float(32), {n});
    Var i("i");
    LoweredFunc f{"copy", {A, B}, For::make(i, 0, n, ForKind::Serial, st(B, ld(A, i), i))};
    HostArray a = HostArray::random(Float(32), {6}, 12), b(Float(32), {6});
    run_lowered(f, {&a, &b});
    for (int k = 0; k < 6; ++k) EXPECT_EQ(b.get(k), a.get(k));
}

TEST(LoopInterpreter, NestedAllocationShadowsAndRestores) {
    // The same buffer variable allocated again inside: the inner storage is fresh (poison), and
    // the outer one is visible again afterwards.
    Buffer O("O", Float(32), {2});
    Var t("t", Handle());
    Stmt inner = Allocate::make(t, Float(32), {1}, StorageScope::Local,
                                st(O, Load::make(Float(32), t, 0), 0));
    Stmt outer = Seq::make({Store::make(t, 5.0f, 0), inner, st(O, Load::make(Float(32), t, 0), 1)});
    LoweredFunc f{"shadow", {O}, Allocate::make(t, Float(32), {1}, StorageScope::Local, outer)};
    HostArray o(Float(32), {2});
    run_lowered(f, {&o});
    EXPECT_TRUE(std::isnan(o.get(0)));
    EXPECT_EQ(o.get(1), 5.0);
}
