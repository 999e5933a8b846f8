// The SPMD interpreter's tensor-core intrinsics on hand-built kernels: mma_sync with the three
// input types against a plain matmul, and ldmatrix's lane rules against the fragment layouts
// (a fragment loaded by ldmatrix and stored element by element reproduces its tile).
#include <gtest/gtest.h>

#include <cmath>

#include "WarpKernel.h"
#include "tessel/HostArray.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

// D (16 x 8, float32) = A (16 x k) * B (k x 8) + 1 through fragment loads, fill, mma, store.
void check_mma(Type in, int k) {
    const FragmentKind ka = k == 16 ? FragmentKind::A16 : FragmentKind::A8;
    const FragmentKind kb = k == 16 ? FragmentKind::B16 : FragmentKind::B8;
    Buffer A("A", in, {i32(16), i32(k)}), B("B", in, {i32(k), i32(8)}),
        D("D", Float(32), {i32(16), i32(8)});
    Var af("af", Handle()), bf("bf", Handle()), cf("cf", Handle()), tx("tx", Int(32));
    Stmt body = Seq::make({
        call(Intrinsic::fragment_load, {kind(ka)}, {tile(af, in, k), tile(A->data, in, k)}),
        call(Intrinsic::fragment_load, {kind(kb)}, {tile(bf, in, 8), tile(B->data, in, 8)}),
        call(Intrinsic::fragment_fill, {kind(FragmentKind::C)}, {tile(cf, Float(32), 8)},
             {make_const(Float(32), 1.0)}),
        call(Intrinsic::mma_sync, {},
             {tile(cf, Float(32), 8), tile(af, in, k), tile(bf, in, 8), tile(cf, Float(32), 8)}),
        call(Intrinsic::fragment_store, {kind(FragmentKind::C)},
             {tile(D->data, Float(32), 8), tile(cf, Float(32), 8)}),
    });
    body = Allocate::make(
        af, in, {i32(16 * k)}, StorageScope::Warp,
        Allocate::make(bf, in, {i32(8 * k)}, StorageScope::Warp,
                       Allocate::make(cf, Float(32), {i32(128)}, StorageScope::Warp, body)));
    LoweredFunc f{"mma", {A, B, D}, lanes_loop(tx, 32, body)};
    HostArray a = HostArray::random(in, {16, k}, 1), b = HostArray::random(in, {k, 8}, 2);
    HostArray d(Float(32), {16, 8});
    run_lowered(f, {&a, &b, &d});
    const double tol = in == Float(32) ? 2e-2 : 1e-4;  // tf32 keeps 10 mantissa bits
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 8; ++j) {
            double want = 1.0;
            for (int x = 0; x < k; ++x) want += a.get(i * k + x) * b.get(x * 8 + j);
            EXPECT_NEAR(d.get(i * 8 + j), want, tol * (1 + std::abs(want))) << i << ", " << j;
        }
}

}  // namespace

TEST(SpmdTensorCore, MmaF16MatchesMatmul) {
    check_mma(Float(16), 16);
}
TEST(SpmdTensorCore, MmaBf16MatchesMatmul) {
    check_mma(BFloat(16), 16);
}
TEST(SpmdTensorCore, MmaTf32MatchesMatmul) {
    check_mma(Float(32), 8);
}

namespace {

// ldmatrix from a shared tile (S: rows x cols as stored) into a fragment of kind k, stored back
// element by element (fragment_store follows ir/Fragment.h): the result is the tile (transposed
// for a B16 tile stored n-major without .trans).
void check_ldmatrix(FragmentKind k, bool trans) {
    const FragmentShape fs = fragment_shape(k);
    const bool transposed = k != FragmentKind::A16 && !trans;  // S is [n][k]
    const int rows = transposed ? fs.cols : fs.rows, cols = transposed ? fs.rows : fs.cols;
    const Type h = Float(16);
    Buffer S("S", h, {i32(rows), i32(cols)}), D("D", h, {i32(fs.rows), i32(fs.cols)});
    Var sh("sh", Handle()), frag("frag", Handle()), tx("tx", Int(32));
    // Every lane copies its share of S into shared memory, then the warp loads the fragment.
    Var e("e", Int(32));
    Expr idx = e * i32(32) + tx;
    Stmt copy = For::make(e, i32(0), i32(rows * cols / 32), ForKind::Serial,
                          Store::make(sh, Load::make(h, S->data, idx), idx), "");
    Stmt body = Seq::make({
        copy,
        Evaluate::make(Call::make(Intrinsic::thread_barrier, {})),
        call(Intrinsic::ldmatrix, {kind(k), i32(trans ? 1 : 0)},
             {tile(frag, h, fs.cols), tile(sh, h, cols)}),
        call(Intrinsic::fragment_store, {kind(k)},
             {tile(D->data, h, fs.cols), tile(frag, h, fs.cols)}),
    });
    body =
        Allocate::make(sh, h, {i32(rows * cols)}, StorageScope::Shared,
                       Allocate::make(frag, h, {i32(fs.rows * fs.cols)}, StorageScope::Warp, body));
    LoweredFunc f{"ldmatrix", {S, D}, lanes_loop(tx, 32, body)};
    HostArray s = HostArray::random(h, {rows, cols}, 3), d(h, {fs.rows, fs.cols});
    run_lowered(f, {&s, &d});
    for (int r = 0; r < fs.rows; ++r)
        for (int c = 0; c < fs.cols; ++c)
            EXPECT_EQ(d.get(r * fs.cols + c),
                      transposed ? s.get(c * cols + r) : s.get(r * cols + c))
                << r << ", " << c;
}

}  // namespace

TEST(SpmdTensorCore, LdmatrixX4IsTheAFragmentLayout) {
    check_ldmatrix(FragmentKind::A16, false);
}
TEST(SpmdTensorCore, LdmatrixX2TransIsTheBFragmentLayoutOfAKMajorTile) {
    check_ldmatrix(FragmentKind::B16, true);
}
TEST(SpmdTensorCore, LdmatrixX2IsTheBFragmentLayoutOfAnNMajorTile) {
    check_ldmatrix(FragmentKind::B16, false);
}
TEST(SpmdTensorCore, LdmatrixX4TransIsTwoBFragmentsOfAKMajorTile) {
    check_ldmatrix(FragmentKind::B16x2, true);
}
TEST(SpmdTensorCore, LdmatrixX4IsTwoBFragmentsOfAnNMajorTile) {
    check_ldmatrix(FragmentKind::B16x2, false);
}

TEST(SpmdTensorCore, EveryFragmentKindCoversItsTileOnceAndTransposedKindsHoldTheSameValues) {
    for (int v = 0; v <= static_cast<int>(FragmentKind::B8T); ++v) {
        FragmentKind k;
        ASSERT_TRUE(fragment_kind_from_int(v, &k));
        const FragmentShape f = fragment_shape(k);
        std::vector<int> seen(static_cast<size_t>(f.rows * f.cols), 0);
        for (int lane = 0; lane < 32; ++lane)
            for (int e = 0; e < f.elems_per_lane; ++e) {
                FragmentPos p = fragment_element(k, lane, e);
                ASSERT_TRUE(p.row >= 0 && p.row < f.rows && p.col >= 0 && p.col < f.cols)
                    << fragment_kind_name(k);
                ++seen[static_cast<size_t>(p.row * f.cols + p.col)];
            }
        for (int n : seen) EXPECT_EQ(n, 1) << fragment_kind_name(k);
    }
    // A transposed kind's lane holds the element its plain kind holds, at (col, row).
    for (auto [plain, t] : {std::pair{FragmentKind::B8, FragmentKind::B8T},
                            std::pair{FragmentKind::B16, FragmentKind::B16T}})
        for (int lane = 0; lane < 32; ++lane)
            for (int e = 0; e < fragment_shape(plain).elems_per_lane; ++e) {
                FragmentPos p = fragment_element(plain, lane, e), q = fragment_element(t, lane, e);
                EXPECT_EQ(p.row, q.col) << fragment_kind_name(t);
                EXPECT_EQ(p.col, q.row) << fragment_kind_name(t);
            }
    FragmentKind out;
    EXPECT_FALSE(fragment_kind_from_int(static_cast<int>(FragmentKind::B8T) + 1, &out));
}

// fragment_store with limits (a tile at its tensor's edge, ir/IR.h): a 16 x 8 C fragment stored
// at row 8, column 4 of a 13 x 9 buffer, 5 rows and 5 columns left there, writes exactly those
// elements and leaves the rest of the buffer as it was.
TEST(SpmdTensorCore, AnEdgeFragmentStoreStopsAtItsRowsAndColumns) {
    Buffer D("D", Float(32), {i32(13), i32(9)});
    Var cf("cf", Handle()), tx("tx", Int(32));
    Stmt body = Seq::make({
        call(Intrinsic::fragment_fill, {kind(FragmentKind::C)}, {tile(cf, Float(32), 8)},
             {make_const(Float(32), 2.5)}),
        call(Intrinsic::fragment_store, {kind(FragmentKind::C)},
             {tile(D->data, Float(32), 9, i32(8), 4), tile(cf, Float(32), 8)}, {i32(5), i32(5)}),
    });
    body = Allocate::make(cf, Float(32), {i32(128)}, StorageScope::Warp, body);
    LoweredFunc f{"edge_store", {D}, lanes_loop(tx, 32, body)};
    HostArray d(Float(32), {13, 9});
    for (int64_t e = 0; e < 13 * 9; ++e) d.set(e, -1.0);
    run_lowered(f, {&d});
    for (int r = 0; r < 13; ++r)
        for (int c = 0; c < 9; ++c)
            EXPECT_EQ(d.get(r * 9 + c), r >= 8 && c >= 4 ? 2.5 : -1.0) << r << ", " << c;
    // The limits are int32 expressions.
    EXPECT_THROW(call(Intrinsic::fragment_store, {kind(FragmentKind::C)},
                      {tile(D->data, Float(32), 9), tile(cf, Float(32), 8)},
                      {make_const(Int(64), 5), i32(5)}),
                 InternalError);
}
