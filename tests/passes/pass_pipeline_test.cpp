// The schedule-independent passes in lowering order on a split, guarded, vectorized loop nest:
// each step keeps the results the same, and the end result passes verify_lowered.
#include <gtest/gtest.h>

#include <cstring>

#include "PassTestUtil.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/InjectBoundsChecks.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/PartitionLoops.h"
#include "tessel/lower/RemoveNoOp.h"
#include "tessel/lower/StorageFlatten.h"
#include "tessel/lower/UnrollLoops.h"
#include "tessel/lower/VectorizeLoops.h"
#include "tessel/lower/VerifyLowered.h"

namespace tessel {
namespace {

TEST(PassPipeline, SplitGuardedVectorizedUnrolledNest) {
    // B[i, j] = A[i, j] * 2 + T[j % 3] for a 10x37 buffer, j split by 8 (vectorized inner),
    // i unrolled by 2 inside a split by 2 of its 10 rows, T a local table.
    Buffer A("A", Float(32), {10, 37}), B("B", Float(32), {10, 37});
    Buffer T("T", Float(32), {3}, StorageScope::Local);
    Var io("io"), ii("ii"), jo("jo"), ji("ji"), t("t");
    Expr i = io * 2 + ii, j = jo * 8 + ji;
    Stmt fill =
        For::make(t, 0, 3, ForKind::Serial, BufferStore::make(T, cast(Float(32), t) + 0.5f, {t}));
    Stmt compute = BufferStore::make(
        B, BufferLoad::make(A, {i, j}) * 2.0f + BufferLoad::make(T, {floormod(j, 3)}), {i, j});
    Stmt nest = For::make(
        io, 0, 5, ForKind::Serial,
        For::make(ii, 0, 2, ForKind::Unrolled,
                  For::make(jo, 0, 5, ForKind::Serial,
                            For::make(ji, 0, 8, ForKind::Vectorized,
                                      IfThenElse::make(Call::make(Intrinsic::likely, {j < 37}),
                                                       compute)))));
    Stmt body =
        Allocate::make(T->data, Float(32), {3}, StorageScope::Local, Seq::make({fill, nest}));
    LoweredFunc f = storage_flatten(LoweredFunc{"f", {A, B}, body});
    std::vector<test::FlatArg> args = {{A->data, Float(32), 370}, {B->data, Float(32), 370}};
    Stmt s = f.body;
    for (auto pass : {+[](const Stmt& x) { return partition_loops(x); },
                      +[](const Stmt& x) { return simplify(x); },
                      +[](const Stmt& x) { return vectorize_loops(x); },
                      +[](const Stmt& x) { return unroll_loops(x); },
                      +[](const Stmt& x) { return remove_no_op(x); }}) {
        Stmt next = pass(s);
        test::expect_same_results(f.body, next, args);
        s = next;
    }
    LoweredFunc out{"f", {A, B}, s};
    EXPECT_NO_THROW(verify_lowered(out)) << s;
    LoweredFunc checked = inject_bounds_checks(out);
    EXPECT_NO_THROW(verify_lowered(checked));
    test::expect_same_results(f.body, checked.body, args);
    // The loop-IR interpreter agrees: the unflattened input and the checked output compute the
    // same B (bit for bit) from the same random A.
    HostArray a = HostArray::random(Float(32), {10, 37}, 7);
    HostArray b0(Float(32), {10, 37}), b1(Float(32), {10, 37});
    run_lowered(LoweredFunc{"f", {A, B}, body}, {&a, &b0});
    run_lowered(checked, {&a, &b1});
    EXPECT_EQ(std::memcmp(b0.data(), b1.data(), b0.nbytes()), 0);
    // The main part stores whole vectors without a guard or predicate.
    int dense_stores = 0;
    post_order_visit(s, [&](const IRNode* n) {
        const auto* st = n->node_type == IRNodeType::Store ? static_cast<const Store*>(n) : nullptr;
        if (st && st->index.as<Ramp>() && !st->predicate.defined()) ++dense_stores;
    });
    EXPECT_GE(dense_stores, 2) << s;
}

}  // namespace
}  // namespace tessel
