// StorageFlatten: BufferLoad/BufferStore → Load/Store with row-major or strided flat indices.
#include <gtest/gtest.h>

#include "PassTestUtil.h"
#include "tessel/ir/Equality.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/lower/StorageFlatten.h"

namespace tessel {
namespace {

Stmt flatten(const std::vector<Buffer>& args, const Stmt& body) {
    return storage_flatten(LoweredFunc{"f", args, body}).body;
}

TEST(StorageFlatten, TwoDimensionalRowMajor) {
    Buffer A("A", Float(32), {64, 32}), B("B", Float(32), {64, 32});
    Var i("i"), j("j");
    Stmt body =
        For::make(i, 0, 64, ForKind::Serial,
                  For::make(j, 0, 32, ForKind::Serial,
                            BufferStore::make(B, BufferLoad::make(A, {i, j}) * 2.0f, {i, j})));
    Stmt out = flatten({A, B}, body);
    Stmt expected = For::make(
        i, 0, 64, ForKind::Serial,
        For::make(
            j, 0, 32, ForKind::Serial,
            Store::make(B->data, Load::make(Float(32), A->data, i * 32 + j) * 2.0f, i * 32 + j)));
    EXPECT_TRUE(structural_equal(out, expected)) << out;
    EXPECT_EQ(to_string(out),
              "for i in range(0, 64):\n"
              "    for j in range(0, 32):\n"
              "        B[i * 32 + j] = A[i * 32 + j] * 2.0f\n");
}

TEST(StorageFlatten, ThreeDimensional) {
    Buffer A("A", Float(32), {4, 8, 16});
    Var i("i"), j("j"), k("k");
    Stmt out = flatten({A}, BufferStore::make(A, 1.0f, {i, j, k}));
    EXPECT_TRUE(structural_equal(out, Store::make(A->data, 1.0f, i * 128 + j * 16 + k))) << out;
}

TEST(StorageFlatten, SymbolicShape) {
    Var n("n"), m("m"), i("i"), j("j");
    Buffer A("A", Float(32), {n, m});
    Stmt out = flatten({A}, BufferStore::make(A, 0.0f, {i, j}));
    EXPECT_TRUE(structural_equal(out, Store::make(A->data, 0.0f, i * m + j))) << out;
}

TEST(StorageFlatten, StridedBufferWithOffset) {
    Var s0("s0"), off("off"), i("i"), j("j");
    auto* n = new BufferNode();
    n->data = Var("S", Handle());
    n->dtype = Float(32);
    n->shape = {16, 16};
    n->strides = {s0, 2};
    n->elem_offset = off;
    n->name = "S";
    Buffer S(n);
    Stmt out = flatten({S}, BufferStore::make(S, BufferLoad::make(S, {j, i}), {i, j}));
    Stmt expected = Store::make(S->data, Load::make(Float(32), S->data, j * s0 + i * 2 + off),
                                i * s0 + j * 2 + off);
    EXPECT_TRUE(structural_equal(out, expected)) << out;
}

TEST(StorageFlatten, ZeroDimensionalBuffer) {
    Buffer A("A", Float(32), {});
    Stmt out = flatten({A}, BufferStore::make(A, 3.0f, {}));
    EXPECT_TRUE(structural_equal(out, Store::make(A->data, 3.0f, 0))) << out;
}

TEST(StorageFlatten, AllocateGetsOneExtent) {
    Buffer T("T", Float(32), {16, 8}, StorageScope::Local);
    Var i("i");
    Stmt body = Allocate::make(T->data, Float(32), {16, 8}, StorageScope::Local,
                               BufferStore::make(T, 0.0f, {i, 3}));
    Stmt out = flatten({}, body);
    Stmt expected = Allocate::make(T->data, Float(32), {128}, StorageScope::Local,
                                   Store::make(T->data, 0.0f, i * 8 + 3));
    EXPECT_TRUE(structural_equal(out, expected)) << out;
    Var n("n");
    Buffer U("U", Float(32), {n, 4});
    Stmt sym = flatten({}, Allocate::make(U->data, Float(32), {n, 4}, StorageScope::Global,
                                          BufferStore::make(U, 0.0f, {0, 1})));
    ASSERT_TRUE(sym.as<Allocate>());
    ASSERT_EQ(sym.as<Allocate>()->extents.size(), 1u);
    EXPECT_TRUE(structural_equal(sym.as<Allocate>()->extents[0], n * 4)) << sym;
}

TEST(StorageFlatten, RampInLastDimensionIsDenseRamp) {
    Buffer A("A", Float(32), {64, 32}), B("B", Float(32), {64, 32});
    Var i("i");
    Expr r = Ramp::make(8, 1, 8);
    Stmt out = flatten({A, B}, BufferStore::make(B, BufferLoad::make(A, {i, r}), {i, r}));
    Expr flat = Ramp::make(i * 32 + 8, 1, 8);
    EXPECT_TRUE(
        structural_equal(out, Store::make(B->data, Load::make(Float(32, 8), A->data, flat), flat)))
        << out;
}

TEST(StorageFlatten, RampInOuterDimensionIsStridedRamp) {
    Buffer A("A", Float(32), {64, 32});
    Var j("j");
    Stmt out =
        flatten({A}, BufferStore::make(A, Broadcast::make(1.0f, 4), {Ramp::make(0, 1, 4), j}));
    EXPECT_TRUE(
        structural_equal(out, Store::make(A->data, Broadcast::make(1.0f, 4), Ramp::make(j, 32, 4))))
        << out;
}

TEST(StorageFlatten, OtherVectorIndexIsLaneWise) {
    Buffer A("A", Float(32), {64, 32});
    Var i("i");
    Expr r = Ramp::make(0, 1, 4);
    Stmt out = flatten({A}, BufferStore::make(A, Broadcast::make(1.0f, 4), {r, r}));
    Expr expected_index = r * Broadcast::make(32, 4) + r;
    EXPECT_TRUE(
        structural_equal(out, Store::make(A->data, Broadcast::make(1.0f, 4), expected_index)))
        << out;
}

TEST(StorageFlatten, Int32IndicesIntoInt64Buffer) {
    Buffer A("A", Float(32), {Expr(int64_t(1) << 20), Expr(int64_t(4096))});
    Var i("i"), j("j");
    Stmt out = flatten({A}, BufferStore::make(A, 0.0f, {i, j}));
    Expr expected = cast(Int(64), i) * Expr(int64_t(4096)) + cast(Int(64), j);
    EXPECT_TRUE(structural_equal(out, Store::make(A->data, 0.0f, expected))) << out;
}

TEST(StorageFlatten, SameResultsAsMultiDimensionalAccess) {
    // Transpose a 6x5 buffer into 5x6 through a 2-D local buffer; run before (through the
    // executor's own flattening of the flat result) and check the expected permutation.
    Buffer A("A", Int(32), {6, 5}), B("B", Int(32), {5, 6});
    Buffer T("T", Int(32), {5, 6}, StorageScope::Local);
    Var i("i"), j("j");
    Stmt body = Allocate::make(
        T->data, Int(32), {5, 6}, StorageScope::Local,
        Seq::make(
            {For::make(i, 0, 6, ForKind::Serial,
                       For::make(j, 0, 5, ForKind::Serial,
                                 BufferStore::make(T, BufferLoad::make(A, {i, j}), {j, i}))),
             For::make(i, 0, 5, ForKind::Serial,
                       For::make(j, 0, 6, ForKind::Serial,
                                 BufferStore::make(B, BufferLoad::make(T, {i, j}) + 1, {i, j})))}));
    Stmt out = flatten({A, B}, body);
    test::TestExecutor ex;
    std::vector<Scalar> a(30), b(30);
    for (int k = 0; k < 30; ++k) a[k].i = k;
    ex.set_memory(A->data, {Int(32), a});
    ex.set_memory(B->data, {Int(32), b});
    ex.run(out);
    for (int r = 0; r < 5; ++r)
        for (int c = 0; c < 6; ++c) EXPECT_EQ(ex.memory(B->data).data[r * 6 + c].i, c * 5 + r + 1);
}

}  // namespace
}  // namespace tessel
