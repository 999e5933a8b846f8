// VectorizeLoops: vectorized loops → Ramp-indexed vector loads and stores, or serial fallbacks.
#include <gtest/gtest.h>

#include "PassTestUtil.h"
#include "tessel/ir/Equality.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/VectorizeLoops.h"

namespace tessel {
namespace {

Expr load(const Var& buf, Expr index, Type t = Float(32)) {
    Type type = t.with_lanes(index.type().lanes);
    return Load::make(type, buf, std::move(index));
}

Stmt vfor(const Var& v, int extent, Stmt body) {
    return For::make(v, 0, extent, ForKind::Vectorized, std::move(body));
}

Stmt sfor(const Var& v, Expr min, Expr extent, Stmt body) {
    return For::make(v, std::move(min), std::move(extent), ForKind::Serial, std::move(body));
}

bool has_for_kind(const Stmt& s, ForKind k) {
    bool found = false;
    post_order_visit(s, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::For) found = found || static_cast<const For*>(n)->kind == k;
    });
    return found;
}

TEST(VectorizeLoops, ElementwiseDenseRampAndBroadcast) {
    Var A("A", Handle()), B("B", Handle()), i("i"), v("v"), s("s", Float(32));
    Stmt body =
        sfor(i, 0, 16, vfor(v, 8, Store::make(B, load(A, i * 8 + v) * s + 1.0f, i * 8 + v)));
    Stmt out = vectorize_loops(body);
    Expr r = Ramp::make(i * 8, 1, 8);
    Stmt expected = sfor(
        i, 0, 16,
        Store::make(
            B, Add::make(Mul::make(load(A, r), Broadcast::make(s, 8)), Broadcast::make(1.0f, 8)),
            r));
    EXPECT_TRUE(structural_equal(out, expected)) << out;
    EXPECT_EQ(to_string(out),
              "for i in range(0, 16):\n"
              "    B[ramp(i * 8, 1, 8)] = A[ramp(i * 8, 1, 8)] * broadcast(s, 8) + "
              "broadcast(1.0f, 8)\n");
}

TEST(VectorizeLoops, LoopInvariantLoadIsBroadcast) {
    Var A("A", Handle()), B("B", Handle()), v("v");
    Stmt out = vectorize_loops(vfor(v, 4, Store::make(B, load(A, 0) + load(A, v + 1), v)));
    Expr r = Ramp::make(0, 1, 4);
    Stmt expected =
        Store::make(B, Add::make(Broadcast::make(load(A, 0), 4), load(A, Ramp::make(1, 1, 4))), r);
    EXPECT_TRUE(structural_equal(out, expected)) << out;
    test::expect_same_results(vfor(v, 4, Store::make(B, load(A, 0) + load(A, v + 1), v)), out,
                              {{A, Float(32), 5}, {B, Float(32), 4}});
}

TEST(VectorizeLoops, NonzeroMinAndIntegerArithmetic) {
    Var A("A", Handle()), v("v");
    Stmt in = For::make(v, 3, 4, ForKind::Vectorized, Store::make(A, v * 2 - 1, 10 - v, Expr()));
    Stmt out = vectorize_loops(in);
    // 10 - ramp(3, 1, 4) is a descending ramp; v*2 - 1 stays affine.
    Stmt expected = Store::make(A, Ramp::make(5, 2, 4), Ramp::make(7, -1, 4));
    EXPECT_TRUE(structural_equal(out, expected)) << out;
    test::expect_same_results(in, out, {{A, Int(32), 8}});
}

TEST(VectorizeLoops, OuterVectorizedWithSerialInnerLoop) {
    Var A("A", Handle()), C("C", Handle()), v("v"), k("k");
    Stmt in = vfor(v, 4, sfor(k, 0, 8, Store::make(C, load(C, v) + load(A, v * 8 + k), v)));
    Stmt out = vectorize_loops(in);
    Expr r = Ramp::make(0, 1, 4);
    Stmt expected = sfor(k, 0, 8, Store::make(C, load(C, r) + load(A, Ramp::make(k, 8, 4)), r));
    EXPECT_TRUE(structural_equal(out, expected)) << out;
    test::expect_same_results(in, out, {{A, Float(32), 32}, {C, Float(32), 4}});
}

TEST(VectorizeLoops, GuardedBodyBecomesPredicated) {
    Var A("A", Handle()), B("B", Handle()), i("i"), v("v");
    Stmt in =
        sfor(i, 0, 3,
             vfor(v, 8,
                  IfThenElse::make(i * 8 + v < 20, Store::make(B, load(A, i * 8 + v), i * 8 + v))));
    Stmt out = vectorize_loops(in);
    Expr r = Ramp::make(i * 8, 1, 8);
    Expr mask = LT::make(r, Broadcast::make(20, 8));
    Stmt expected = sfor(i, 0, 3, Store::make(B, Load::make(Float(32, 8), A, r, mask), r, mask));
    EXPECT_TRUE(structural_equal(out, expected)) << out;
    // Buffers of exactly 20 elements: an unmasked lane would be out of bounds.
    test::expect_same_results(in, out, {{A, Float(32), 20}, {B, Float(32), 20}});
}

TEST(VectorizeLoops, GuardWithElseBranch) {
    Var A("A", Handle()), B("B", Handle()), v("v");
    Stmt in = vfor(v, 8,
                   IfThenElse::make(load(A, v, Int(32)) > 50, Store::make(B, 1, v),
                                    Store::make(B, load(A, v, Int(32)), v)));
    Stmt out = vectorize_loops(in);
    EXPECT_FALSE(has_for_kind(out, ForKind::Serial)) << out;
    test::expect_same_results(in, out, {{A, Int(32), 8}, {B, Int(32), 8}});
}

TEST(VectorizeLoops, UniformGuardStaysAnIf) {
    Var A("A", Handle()), i("i"), v("v");
    Stmt out = vectorize_loops(vfor(v, 4, IfThenElse::make(i < 3, Store::make(A, 0.0f, v))));
    Stmt expected =
        IfThenElse::make(i < 3, Store::make(A, Broadcast::make(0.0f, 4), Ramp::make(0, 1, 4)));
    EXPECT_TRUE(structural_equal(out, expected)) << out;
}

TEST(VectorizeLoops, LetOfAVectorGetsAVectorVariable) {
    Var A("A", Handle()), B("B", Handle()), v("v"), x("x", Float(32));
    Stmt in = vfor(v, 4, LetStmt::make(x, load(A, v) * 2.0f, Store::make(B, x + x, v)));
    Stmt out = vectorize_loops(in);
    const auto* let = out.as<LetStmt>();
    ASSERT_TRUE(let) << out;
    EXPECT_EQ(let->var.type(), Float(32, 4));
    EXPECT_EQ(let->var.name(), "x");
    test::expect_same_results(in, out, {{A, Float(32), 4}, {B, Float(32), 4}});
}

TEST(VectorizeLoops, BufferStoreBeforeFlattening) {
    Buffer A("A", Float(32), {16, 8}), B("B", Float(32), {16, 8});
    Var i("i"), v("v");
    Stmt out =
        vectorize_loops(vfor(v, 8, BufferStore::make(B, BufferLoad::make(A, {i, v}), {i, v})));
    Expr r = Ramp::make(0, 1, 8);
    EXPECT_TRUE(structural_equal(out, BufferStore::make(B, BufferLoad::make(A, {i, r}), {i, r})))
        << out;
}

TEST(VectorizeLoops, ExtentOneSubstitutesTheMin) {
    Var A("A", Handle()), v("v");
    Stmt out = vectorize_loops(For::make(v, 5, 1, ForKind::Vectorized, Store::make(A, v, v)));
    EXPECT_TRUE(structural_equal(out, Store::make(A, 5, 5))) << out;
}

/// Each body here must stay a serial loop (vectorizing it would be wrong or impossible).
void expect_serial_fallback(const Stmt& in, const std::vector<test::FlatArg>& args) {
    Stmt out = vectorize_loops(in);
    EXPECT_FALSE(has_for_kind(out, ForKind::Vectorized)) << out;
    EXPECT_TRUE(has_for_kind(out, ForKind::Serial)) << out;
    test::expect_same_results(in, out, args);
}

TEST(VectorizeLoops, ReductionIntoOneElementStaysSerial) {
    Var A("A", Handle()), S("S", Handle()), v("v");
    expect_serial_fallback(vfor(v, 8, Store::make(S, load(S, 0) + load(A, v), 0)),
                           {{A, Float(32), 8}, {S, Float(32), 1}});
}

TEST(VectorizeLoops, InnerExtentDependingOnVarStaysSerial) {
    Var A("A", Handle()), v("v"), k("k");
    expect_serial_fallback(vfor(v, 4, sfor(k, 0, v, Store::make(A, k, v * 4 + k))),
                           {{A, Int(32), 16}});
}

TEST(VectorizeLoops, VaryingGuardAroundALoopStaysSerial) {
    Var A("A", Handle()), v("v"), k("k");
    expect_serial_fallback(
        vfor(v, 4, IfThenElse::make(v < 2, sfor(k, 0, 2, Store::make(A, k, v * 2 + k)))),
        {{A, Int(32), 8}});
}

TEST(VectorizeLoops, GuardReadingWhatItWritesStaysSerial) {
    Var A("A", Handle()), v("v");
    expect_serial_fallback(
        vfor(v, 4, IfThenElse::make(load(A, 0, Int(32)) < 50, Store::make(A, 99, 3 - v))),
        {{A, Int(32), 4}});
}

TEST(VectorizeLoops, AllocationInsideStaysSerial) {
    Var A("A", Handle()), T("T", Handle()), v("v");
    Stmt body =
        Allocate::make(T, Int(32), {1}, StorageScope::Local,
                       Seq::make({Store::make(T, v, 0), Store::make(A, load(T, 0, Int(32)), v)}));
    expect_serial_fallback(vfor(v, 4, body), {{A, Int(32), 4}});
}

TEST(VectorizeLoops, NonConstantExtentStaysSerial) {
    Var A("A", Handle()), v("v"), n("n");
    Stmt out = vectorize_loops(For::make(v, 0, n, ForKind::Vectorized, Store::make(A, 1, v)));
    EXPECT_TRUE(structural_equal(out, sfor(v, 0, n, Store::make(A, 1, v)))) << out;
}

TEST(VectorizeLoops, NestedVectorizedLoopsKeepTheInnerOne) {
    Var A("A", Handle()), u("u"), v("v");
    Stmt in = vfor(u, 2, vfor(v, 4, Store::make(A, u + v, u * 4 + v)));
    Stmt out = vectorize_loops(in);
    EXPECT_FALSE(has_for_kind(out, ForKind::Vectorized)) << out;
    const auto* loop = out.as<For>();
    ASSERT_TRUE(loop) << out;
    EXPECT_TRUE(loop->body.as<Store>() && loop->body.as<Store>()->index.as<Ramp>()) << out;
    test::expect_same_results(in, out, {{A, Int(32), 8}});
}

// A guard whose lanes agree (the vector starts at a multiple of 4 and the edge is one) stays a
// scalar condition around a dense vector load; one that can cut a vector predicates the lanes.
TEST(VectorizeLoops, LaneUniformGuardsKeepDenseLoads) {
    Var A("A", Handle()), B("B", Handle()), o("o"), v("v");
    auto guarded = [&](int edge) {
        Expr i = o * 4 + v;
        return sfor(
            o, 0, 4,
            vfor(v, 4,
                 Store::make(B, if_then_else(i < edge, Load::make(Float(32), A, i), 0.0f), i)));
    };
    Stmt aligned = vectorize_loops(guarded(12));
    const auto* store = aligned.as<For>()->body.as<Store>();
    ASSERT_TRUE(store) << aligned;
    const auto* select = store->value.as<Call>();
    ASSERT_TRUE(select && select->op == Intrinsic::if_then_else) << aligned;
    EXPECT_TRUE(select->args[0].type().is_scalar()) << aligned;
    const auto* load = select->args[1].as<Load>();
    ASSERT_TRUE(load) << aligned;
    EXPECT_FALSE(load->predicate.defined()) << aligned;
    test::expect_same_results(guarded(12), aligned, {{A, Float(32), 16}, {B, Float(32), 16}});

    Stmt cut = vectorize_loops(guarded(13));
    const auto* select2 = cut.as<For>()->body.as<Store>()->value.as<Call>();
    ASSERT_TRUE(select2) << cut;
    EXPECT_TRUE(select2->args[0].type().is_vector()) << cut;
    test::expect_same_results(guarded(13), cut, {{A, Float(32), 16}, {B, Float(32), 16}});
}

// A split's tail guard, as schedule_ops writes it.
Expr split_guard(Expr c) {
    return Call::make(Intrinsic::likely, {std::move(c)});
}

// Counts the loads and stores of `buffer` in `s` that carry a predicate, and those that do not.
std::pair<int, int> masked_and_whole(const Stmt& s, const Var& buffer) {
    int masked = 0, whole = 0;
    post_order_visit(s, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::Load) {
            const auto* l = static_cast<const Load*>(n);
            if (l->buffer_var.same_as(buffer)) ++(l->predicate.defined() ? masked : whole);
        }
        if (n->node_type == IRNodeType::Store) {
            const auto* st = static_cast<const Store*>(n);
            if (st->buffer_var.same_as(buffer)) ++(st->predicate.defined() ? masked : whole);
        }
    });
    return {masked, whole};
}

// The guarded tail of a register tile (9 valid columns of a 16-lane tile): the tile's local
// buffer T covers the whole tile, so its loads and stores stay whole vectors (the lanes past the
// guard are padded points); A[i], the same address in every lane and free of the guard's
// variables, stays a scalar load; the argument B is read masked and the output Out written
// masked. The results equal the scalar loop's, and no access leaves its buffer.
TEST(VectorizeLoops, SplitTailKeepsWholeVectorsOnAllocatedBuffers) {
    Var A("A", Handle()), B("B", Handle()), Out("Out", Handle()), T("T", Handle());
    Var i("i"), v("v"), w("w"), u("u");
    Stmt init = vfor(v, 16, IfThenElse::make(split_guard(v < 9), Store::make(T, 0.0f, i * 16 + v)));
    Stmt update =
        vfor(w, 16,
             IfThenElse::make(
                 split_guard(w < 9),
                 Store::make(T, load(T, i * 16 + w) + load(A, i) * load(B, w), i * 16 + w)));
    Stmt copy = vfor(
        u, 16,
        IfThenElse::make(split_guard(u < 9), Store::make(Out, load(T, i * 16 + u), i * 9 + u)));
    Stmt in = Allocate::make(T, Float(32), {32}, StorageScope::Local,
                             sfor(i, 0, 2, Seq::make({init, update, copy})));
    Stmt out = vectorize_loops(in);
    EXPECT_FALSE(has_for_kind(out, ForKind::Vectorized)) << out;
    EXPECT_EQ(masked_and_whole(out, T), std::make_pair(0, 4)) << out;
    EXPECT_EQ(masked_and_whole(out, A), std::make_pair(0, 1)) << out;
    EXPECT_EQ(masked_and_whole(out, B), std::make_pair(1, 0)) << out;
    EXPECT_EQ(masked_and_whole(out, Out), std::make_pair(1, 0)) << out;
    test::expect_same_results(in, out,
                              {{A, Float(32), 2}, {B, Float(32), 9}, {Out, Float(32), 18}});
}

// What keeps its mask under a split's guard: a store of an allocated buffer the vector does not
// cover aligned (a row of 9 + 16 lanes would write the next row's valid points), a load whose
// scalar address uses the guard's variable, and any access under a guard that is not a split's
// (no `likely`: a condition of the computation, which may protect an address).
TEST(VectorizeLoops, GuardedAccessesThatMayNotBeWholeStayMasked) {
    Var A("A", Handle()), Out("Out", Handle()), T("T", Handle()), i("i"), v("v");
    Stmt row = vfor(
        v, 16, IfThenElse::make(split_guard(v < 9), Store::make(T, load(A, i * 9 + v), i * 9 + v)));
    Stmt copy =
        vfor(v, 16,
             IfThenElse::make(split_guard(v < 9), Store::make(Out, load(T, i * 9 + v), i * 9 + v)));
    Stmt in = Allocate::make(T, Float(32), {32}, StorageScope::Local,
                             sfor(i, 0, 2, Seq::make({row, copy})));
    Stmt out = vectorize_loops(in);
    EXPECT_EQ(masked_and_whole(out, T).second, 1) << out;  // the load: inside the allocation
    EXPECT_EQ(masked_and_whole(out, T).first, 1) << out;   // the unaligned store keeps its mask
    test::expect_same_results(in, out, {{A, Float(32), 18}, {Out, Float(32), 18}});

    Var n("n");
    Stmt scalar_uses_guard =
        vfor(v, 8,
             IfThenElse::make(split_guard(v + n < 9),
                              Store::make(Out, load(A, n), v)));  // A[n]: n bounded
    Stmt guarded = vectorize_loops(sfor(n, 0, 12, scalar_uses_guard));
    EXPECT_EQ(masked_and_whole(guarded, A), std::make_pair(1, 0)) << guarded;
    test::expect_same_results(sfor(n, 0, 12, scalar_uses_guard), guarded,
                              {{A, Float(32), 9}, {Out, Float(32), 8}});

    Stmt not_a_split = vfor(v, 8, IfThenElse::make(v < 5, Store::make(Out, load(A, i), v)));
    Stmt kept = vectorize_loops(sfor(i, 0, 2, not_a_split));
    EXPECT_EQ(masked_and_whole(kept, A), std::make_pair(1, 0)) << kept;
}

// A peeled tail panel (a GEMM's last 13 or 1 columns in a tile of 32): the guard admits at most
// 13 lanes, so the loop runs 16 (the next power of two; the guard stays on them), or 1, a scalar.
// A guard the enclosing loop can widen past the extent (i * 32 + v < 77 for i up to 2) keeps it.
int lanes_of_store(const Stmt& s, const Var& buffer) {
    int lanes = 0;
    post_order_visit(s, [&](const IRNode* n) {
        if (n->node_type != IRNodeType::Store) return;
        const auto* st = static_cast<const Store*>(n);
        if (st->buffer_var.same_as(buffer)) lanes = st->value.type().lanes;
    });
    return lanes;
}

TEST(VectorizeLoops, TailGuardNarrowsTheVector) {
    Var A("A", Handle()), Out("Out", Handle()), T("T", Handle()), i("i"), v("v");
    auto tail = [&](Expr edge) {
        Stmt update =
            vfor(v, 32,
                 IfThenElse::make(split_guard(v < edge),
                                  Store::make(T, load(T, i * 32 + v) + load(A, v), i * 32 + v)));
        Stmt copy = vfor(
            v, 32,
            IfThenElse::make(split_guard(i < 3),
                             IfThenElse::make(split_guard(v < edge),
                                              Store::make(Out, load(T, i * 32 + v), i * 13 + v))));
        return Allocate::make(T, Float(32), {128}, StorageScope::Local,
                              sfor(i, 0, 4, Seq::make({update, copy})));
    };
    for (auto [edge, lanes] : {std::pair<int, int>{13, 16}, {1, 1}, {16, 16}, {17, 32}}) {
        Stmt in = tail(edge), out = vectorize_loops(in);
        EXPECT_FALSE(has_for_kind(out, ForKind::Vectorized)) << out;
        EXPECT_EQ(lanes_of_store(out, T), lanes) << edge << "\n" << out;
        EXPECT_EQ(lanes_of_store(out, Out), lanes) << edge << "\n" << out;
        test::expect_same_results(in, out, {{A, Float(32), 32}, {Out, Float(32), 39 + edge}});
    }
    // The bound depends on the enclosing loop and reaches past the 32 lanes: nothing narrows.
    Stmt wide = sfor(i, 0, 3,
                     vfor(v, 32,
                          IfThenElse::make(split_guard(i * 32 + v < 77),
                                           Store::make(Out, load(A, i * 32 + v), i * 32 + v))));
    Stmt out = vectorize_loops(wide);
    EXPECT_EQ(lanes_of_store(out, Out), 32) << out;
    test::expect_same_results(wide, out, {{A, Float(32), 77}, {Out, Float(32), 77}});
    // Past the last panel's start (i == 2) the guard is 77 - 64 = 13 lanes: 16.
    Stmt last =
        vfor(v, 32,
             IfThenElse::make(split_guard(v + 64 < 77), Store::make(Out, load(A, v + 64), v + 64)));
    Stmt narrowed = vectorize_loops(last);
    EXPECT_EQ(lanes_of_store(narrowed, Out), 16) << narrowed;
    test::expect_same_results(last, narrowed, {{A, Float(32), 77}, {Out, Float(32), 77}});
}

}  // namespace
}  // namespace tessel
