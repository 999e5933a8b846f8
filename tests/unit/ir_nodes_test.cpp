// Every IR node: make() derives the type and keeps the fields, and rejects malformed input with
// InternalError. Also the traversal tools (visitor, mutator, substitute, post_order_visit),
// constants, and Type's names.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "ir_test_util.h"
#include "tessel/ir/Equality.h"
#include "tessel/ir/Hash.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/ir/IRVisitor.h"

using namespace tessel;
using namespace tessel::test;

namespace {

// One well-formed instance of every expression and statement node (see EveryNodeKindIsCovered).
struct Samples {
    Var i{"i"}, j{"j"}, x{"x", Float(32)}, h{"h", Handle()};
    Buffer buf{"B", Float(32), {16, 16}};
    Tensor tensor = make_tensor("T", {16});
    IterVar k = make_reduce_axis("k", 0, 16);

    std::vector<Expr> exprs() const {
        Expr fx = x;
        return {IntImm::make(Int(32), 3),
                UIntImm::make(UInt(8), 7),
                FloatImm::make(Float(32), 1.5),
                i,
                Cast::make(Float(32), i),
                Add::make(i, j),
                Sub::make(i, j),
                Mul::make(i, j),
                Div::make(i, j),
                Mod::make(i, j),
                FloorDiv::make(i, j),
                FloorMod::make(i, j),
                Min::make(i, j),
                Max::make(i, j),
                EQ::make(i, j),
                NE::make(i, j),
                LT::make(i, j),
                LE::make(i, j),
                GT::make(i, j),
                GE::make(i, j),
                And::make(i < j, j < i),
                Or::make(i < j, j < i),
                Not::make(i < j),
                Select::make(i < j, fx, fx),
                Ramp::make(i, 1, 4),
                Broadcast::make(fx, 4),
                Let::make(Var("y"), i + 1, j),
                Call::make(Intrinsic::exp, {fx}),
                TensorRead::make(tensor, {i}),
                Reduce::make(sum_reducer(), {TensorRead::make(tensor, {k.var()})}, {k}, Expr(), 0),
                Load::make(Float(32), h, i),
                BufferLoad::make(buf, {i, j})};
    }

    std::vector<Stmt> stmts() const {
        Stmt store = Store::make(h, x, i);
        return {LetStmt::make(Var("y"), i, store),
                AttrStmt::make("pragma", 1, store),
                AssertStmt::make(i < 4, "i too large"),
                For::make(Var("l"), 0, 4, ForKind::Serial, store),
                store,
                BufferStore::make(buf, x, {i, j}),
                Allocate::make(Var("t", Handle()), Float(32), {4}, StorageScope::Local, store),
                Seq::make({store, store}),
                IfThenElse::make(i < 4, store, store),
                Evaluate::make(Call::make(Intrinsic::thread_barrier, {}))};
    }
};

}  // namespace

TEST(IRNodes, EveryNodeKindIsCovered) {
    Samples s;
    std::set<IRNodeType> seen;
    for (const Expr& e : s.exprs()) seen.insert(e.node_type());
    for (const Stmt& st : s.stmts()) seen.insert(st.node_type());
    std::vector<IRNodeType> all = {
#define TESSEL_NODE_ENTRY(T) IRNodeType::T,
        TESSEL_FOR_EACH_EXPR_NODE(TESSEL_NODE_ENTRY) TESSEL_FOR_EACH_STMT_NODE(TESSEL_NODE_ENTRY)
#undef TESSEL_NODE_ENTRY
    };
    for (IRNodeType t : all) EXPECT_TRUE(seen.count(t)) << "no sample of " << node_type_name(t);
    EXPECT_EQ(seen.size(), all.size());
}

TEST(IRNodes, EveryNodePrintsComparesHashesAndMutatesToItself) {
    Samples s;
    IRMutator id;  // rewrites nothing
    for (const Expr& e : s.exprs()) {
        SCOPED_TRACE(node_type_name(e.node_type()));
        EXPECT_FALSE(to_string(e).empty());
        EXPECT_TRUE(structural_equal(e, e));
        EXPECT_EQ(structural_hash(e), structural_hash(e));
        EXPECT_TRUE(id.mutate(e).same_as(e));
    }
    for (const Stmt& st : s.stmts()) {
        SCOPED_TRACE(node_type_name(st.node_type()));
        EXPECT_FALSE(to_string(st).empty());
        EXPECT_TRUE(structural_equal(st, st));
        EXPECT_TRUE(id.mutate(st).same_as(st));
    }
}

// ---------------------------------------------------------------------------------------------
// Constants

TEST(IRNodes, IntImm) {
    Expr e = IntImm::make(Int(8), -5);
    ASSERT_TRUE(e.as<IntImm>());
    EXPECT_EQ(e.type(), Int(8));
    EXPECT_EQ(e.as<IntImm>()->value, -5);
    EXPECT_EQ(IntImm::make(Bool(), 1).type(), Bool());
    EXPECT_THROW(IntImm::make(Int(8), 128), InternalError);
    EXPECT_THROW(IntImm::make(Bool(), 2), InternalError);
    EXPECT_THROW(IntImm::make(Float(32), 1), InternalError);
    EXPECT_THROW(IntImm::make(UInt(32), 1), InternalError);
    EXPECT_THROW(IntImm::make(Int(32, 4), 1), InternalError);
}

TEST(IRNodes, UIntImm) {
    Expr e = UIntImm::make(UInt(8), 255);
    EXPECT_EQ(e.type(), UInt(8));
    EXPECT_EQ(e.as<UIntImm>()->value, 255u);
    EXPECT_EQ(UIntImm::make(UInt(64), ~uint64_t(0)).as<UIntImm>()->value, ~uint64_t(0));
    EXPECT_THROW(UIntImm::make(UInt(8), 256), InternalError);
    EXPECT_THROW(UIntImm::make(Int(32), 1), InternalError);
    EXPECT_THROW(UIntImm::make(UInt(8, 2), 1), InternalError);
}

TEST(IRNodes, FloatImm) {
    Expr e = FloatImm::make(Float(32), 0.1);
    EXPECT_EQ(e.type(), Float(32));
    EXPECT_EQ(e.as<FloatImm>()->value, static_cast<double>(0.1f));  // rounded to float32
    EXPECT_EQ(FloatImm::make(Float(64), 0.1).as<FloatImm>()->value, 0.1);
    EXPECT_THROW(FloatImm::make(Int(32), 1.0), InternalError);
    EXPECT_THROW(FloatImm::make(Float(32, 4), 1.0), InternalError);
}

TEST(IRNodes, Variable) {
    Var a("a", Float(16)), a2("a", Float(16));
    ASSERT_TRUE(a.as<Variable>());
    EXPECT_EQ(a.type(), Float(16));
    EXPECT_EQ(a.name(), "a");
    EXPECT_FALSE(a.same_as(a2));  // identity, not name
    Var again(a.get());
    EXPECT_TRUE(again.same_as(a));
    EXPECT_EQ(Var("n").type(), Int(32));
    EXPECT_THROW(Add::make(Var(), Var("b")), InternalError);
}

TEST(IRNodes, Cast) {
    Var i("i"), v("v", Int(32, 4));
    Expr e = Cast::make(Float(32), i);
    EXPECT_EQ(e.type(), Float(32));
    EXPECT_TRUE(e.as<Cast>()->value.same_as(i));
    EXPECT_EQ(Cast::make(Float(16, 4), v).type(), Float(16, 4));
    EXPECT_THROW(Cast::make(Float(32, 4), i), InternalError);
    EXPECT_THROW(Cast::make(Float(32), v), InternalError);
    EXPECT_THROW(Cast::make(Handle(), i), InternalError);
    EXPECT_THROW(Cast::make(Int(32), Var("h", Handle())), InternalError);
    EXPECT_THROW(Cast::make(Int(32), Expr()), InternalError);
}

// ---------------------------------------------------------------------------------------------
// Binary arithmetic: one test per node, generated.

template <typename T>
void check_arith_node() {
    Var a("a"), b("b"), f("f", Float(32)), l("l", Int(64)), v("v", Int(32, 4));
    Expr e = T::make(a, b);
    ASSERT_TRUE(e.as<T>());
    EXPECT_EQ(e.type(), Int(32));
    EXPECT_TRUE(e.as<T>()->a.same_as(a));
    EXPECT_TRUE(e.as<T>()->b.same_as(b));
    EXPECT_EQ(T::make(f, f).type(), Float(32));
    EXPECT_EQ(T::make(v, v).type(), Int(32, 4));
    EXPECT_THROW(T::make(a, l), InternalError);
    EXPECT_THROW(T::make(a, f), InternalError);
    EXPECT_THROW(T::make(a, v), InternalError);
    EXPECT_THROW(T::make(a, Expr()), InternalError);
    EXPECT_THROW(T::make(Expr(), a), InternalError);
    EXPECT_THROW(T::make(a < b, a < b), InternalError);
    Var h("h", Handle());
    EXPECT_THROW(T::make(h, h), InternalError);
}

TEST(IRNodes, Add) {
    check_arith_node<Add>();
}
TEST(IRNodes, Sub) {
    check_arith_node<Sub>();
}
TEST(IRNodes, Mul) {
    check_arith_node<Mul>();
}
TEST(IRNodes, Div) {
    check_arith_node<Div>();
}
TEST(IRNodes, Mod) {
    check_arith_node<Mod>();
}
TEST(IRNodes, FloorDiv) {
    check_arith_node<FloorDiv>();
}
TEST(IRNodes, FloorMod) {
    check_arith_node<FloorMod>();
}
TEST(IRNodes, Min) {
    check_arith_node<Min>();
}
TEST(IRNodes, Max) {
    check_arith_node<Max>();
}

template <typename T>
void check_cmp_node() {
    Var a("a"), b("b"), f("f", Float(32)), v("v", Float(32, 8));
    Expr e = T::make(a, b);
    ASSERT_TRUE(e.as<T>());
    EXPECT_EQ(e.type(), Bool());
    EXPECT_TRUE(e.as<T>()->a.same_as(a));
    EXPECT_TRUE(e.as<T>()->b.same_as(b));
    EXPECT_EQ(T::make(v, v).type(), Bool(8));
    EXPECT_EQ(T::make(a < b, a < b).type(), Bool());  // bools compare too
    EXPECT_THROW(T::make(a, f), InternalError);
    EXPECT_THROW(T::make(f, v), InternalError);
    EXPECT_THROW(T::make(Expr(), a), InternalError);
    Var h("h", Handle());
    EXPECT_THROW(T::make(h, h), InternalError);
}

TEST(IRNodes, EQ) {
    check_cmp_node<EQ>();
}
TEST(IRNodes, NE) {
    check_cmp_node<NE>();
}
TEST(IRNodes, LT) {
    check_cmp_node<LT>();
}
TEST(IRNodes, LE) {
    check_cmp_node<LE>();
}
TEST(IRNodes, GT) {
    check_cmp_node<GT>();
}
TEST(IRNodes, GE) {
    check_cmp_node<GE>();
}

template <typename T>
void check_logic_node() {
    Var a("a"), b("b");
    Expr p = a < b, q = b < a;
    Expr e = T::make(p, q);
    ASSERT_TRUE(e.as<T>());
    EXPECT_EQ(e.type(), Bool());
    EXPECT_TRUE(e.as<T>()->a.same_as(p));
    Expr v = Ramp::make(a, 1, 4) < Broadcast::make(b, 4);
    EXPECT_EQ(T::make(v, v).type(), Bool(4));
    EXPECT_THROW(T::make(a, b), InternalError);
    EXPECT_THROW(T::make(p, v), InternalError);
    EXPECT_THROW(T::make(p, Expr()), InternalError);
}

TEST(IRNodes, And) {
    check_logic_node<And>();
}
TEST(IRNodes, Or) {
    check_logic_node<Or>();
}

TEST(IRNodes, Not) {
    Var a("a");
    Expr p = a < 3;
    Expr e = Not::make(p);
    EXPECT_EQ(e.type(), Bool());
    EXPECT_TRUE(e.as<Not>()->a.same_as(p));
    EXPECT_EQ(Not::make(const_true(4)).type(), Bool(4));
    EXPECT_THROW(Not::make(a), InternalError);
    EXPECT_THROW(Not::make(Expr()), InternalError);
}

TEST(IRNodes, Select) {
    Var a("a"), f("f", Float(32)), v("v", Float(32, 4));
    Expr e = Select::make(a < 0, f, f * 2.0f);
    EXPECT_EQ(e.type(), Float(32));
    EXPECT_TRUE(e.as<Select>()->true_value.same_as(f));
    EXPECT_EQ(Select::make(a < 0, v, v).type(), Float(32, 4));  // scalar condition
    EXPECT_EQ(Select::make(const_true(4), v, v).type(), Float(32, 4));
    EXPECT_THROW(Select::make(a, f, f), InternalError);
    EXPECT_THROW(Select::make(a < 0, f, a), InternalError);
    EXPECT_THROW(Select::make(const_true(2), v, v), InternalError);
    EXPECT_THROW(Select::make(Expr(), f, f), InternalError);
}

TEST(IRNodes, Ramp) {
    Var a("a"), l("l", Int(64));
    Expr e = Ramp::make(a, 2, 8);
    EXPECT_EQ(e.type(), Int(32, 8));
    EXPECT_EQ(e.as<Ramp>()->lanes, 8);
    EXPECT_TRUE(e.as<Ramp>()->base.same_as(a));
    EXPECT_EQ(Ramp::make(l, Expr(int64_t(1)), 4).type(), Int(64, 4));
    EXPECT_THROW(Ramp::make(a, 1, 1), InternalError);
    EXPECT_THROW(Ramp::make(a, Expr(int64_t(1)), 4), InternalError);
    EXPECT_THROW(Ramp::make(Var("f", Float(32)), 1.0f, 4), InternalError);
    EXPECT_THROW(Ramp::make(Ramp::make(a, 1, 4), Broadcast::make(Expr(1), 4), 4), InternalError);
    EXPECT_THROW(Ramp::make(Expr(), 1, 4), InternalError);
}

TEST(IRNodes, Broadcast) {
    Var f("f", Float(32));
    Expr e = Broadcast::make(f, 16);
    EXPECT_EQ(e.type(), Float(32, 16));
    EXPECT_EQ(e.as<Broadcast>()->lanes, 16);
    EXPECT_THROW(Broadcast::make(f, 1), InternalError);
    EXPECT_THROW(Broadcast::make(Broadcast::make(f, 2), 2), InternalError);
    EXPECT_THROW(Broadcast::make(Expr(), 4), InternalError);
}

TEST(IRNodes, Let) {
    Var x("x"), f("f", Float(32));
    Expr e = Let::make(x, 3, cast(Float(32), x) * f);
    EXPECT_EQ(e.type(), Float(32));  // the body's type
    EXPECT_TRUE(e.as<Let>()->var.same_as(x));
    EXPECT_THROW(Let::make(x, f, x), InternalError);
    EXPECT_THROW(Let::make(Var(), 1, x), InternalError);
    EXPECT_THROW(Let::make(x, 1, Expr()), InternalError);
}

TEST(IRNodes, Call) {
    Var f("f", Float(32)), i("i"), v("v", Float(16, 4));
    Expr e = Call::make(Intrinsic::exp, {f});
    EXPECT_EQ(e.type(), Float(32));
    EXPECT_EQ(e.as<Call>()->op, Intrinsic::exp);
    EXPECT_EQ(Call::make(Intrinsic::sqrt, {v}).type(), Float(16, 4));
    EXPECT_EQ(Call::make(Intrinsic::isnan, {v}).type(), Bool(4));
    EXPECT_EQ(Call::make(Intrinsic::abs, {i}).type(), Int(32));
    EXPECT_EQ(Call::make(Intrinsic::if_then_else, {i < 2, f, f}).type(), Float(32));
    EXPECT_EQ(Call::make(Intrinsic::likely, {i < 2}).type(), Bool());
    EXPECT_EQ(Call::make(Intrinsic::thread_barrier, {}).type(), Int(32));
    EXPECT_EQ(Call::make(Intrinsic::fma, {f, f, f}).type(), Float(32));
    EXPECT_THROW(Call::make(Intrinsic::exp, {i}), InternalError);
    EXPECT_THROW(Call::make(Intrinsic::exp, {f, f}), InternalError);
    EXPECT_THROW(Call::make(Intrinsic::pow, {f, Var("d", Float(64))}), InternalError);
    EXPECT_THROW(Call::make(Intrinsic::abs, {i < 2}), InternalError);
    EXPECT_THROW(Call::make(Intrinsic::isnan, {i}), InternalError);
    EXPECT_THROW(Call::make(Intrinsic::if_then_else, {i, f, f}), InternalError);
    EXPECT_THROW(Call::make(Intrinsic::if_then_else, {i < 2, f, i}), InternalError);
    EXPECT_THROW(Call::make(Intrinsic::likely, {i}), InternalError);
    EXPECT_THROW(Call::make(Intrinsic::exp, {Expr()}), InternalError);
    Intrinsic op;
    ASSERT_TRUE(intrinsic_from_name("sigmoid", &op));
    EXPECT_EQ(op, Intrinsic::sigmoid);
    EXPECT_STREQ(intrinsic_name(op), "sigmoid");
    EXPECT_EQ(intrinsic_arity(Intrinsic::fma), 3);
    EXPECT_FALSE(intrinsic_is_pure(Intrinsic::thread_barrier));
    EXPECT_FALSE(intrinsic_from_name("nope", &op));
}

TEST(IRNodes, StatementIntrinsicsAreTheImpureOnes) {
    // The one list the code generators and the evaluator refuse inside expressions.
    std::set<std::string> statements;
    for (int k = 0; intrinsic_name(static_cast<Intrinsic>(k)) != std::string("fragment_fill"); ++k)
        if (is_statement_intrinsic(static_cast<Intrinsic>(k)))
            statements.insert(intrinsic_name(static_cast<Intrinsic>(k)));
    statements.insert("fragment_fill");
    EXPECT_EQ(statements,
              (std::set<std::string>{"thread_barrier", "cp_async", "cp_async_commit",
                                     "cp_async_wait", "thread_allreduce", "mma_sync", "ldmatrix",
                                     "fragment_load", "fragment_store", "fragment_fill"}));
    EXPECT_TRUE(is_statement_intrinsic(Intrinsic::fragment_fill));
    EXPECT_FALSE(is_statement_intrinsic(Intrinsic::if_then_else));
    EXPECT_FALSE(is_statement_intrinsic(Intrinsic::swizzle));
}

TEST(IRNodes, TensorRead) {
    Tensor t = make_tensor("T", {4, 8}, Float(16));
    Var i("i"), j("j", Int(64));
    Expr e = TensorRead::make(t, {i, j});
    EXPECT_EQ(e.type(), Float(16));
    EXPECT_TRUE(e.as<TensorRead>()->tensor.same_as(t));
    EXPECT_EQ(e.as<TensorRead>()->indices.size(), 2u);
    EXPECT_THROW(TensorRead::make(t, {i}), InternalError);
    EXPECT_THROW(TensorRead::make(t, {i, Var("f", Float(32))}), InternalError);
    EXPECT_THROW(TensorRead::make(t, {i, Ramp::make(i, 1, 4)}), InternalError);
    EXPECT_THROW(TensorRead::make(t, {i, Expr()}), InternalError);
    EXPECT_THROW(TensorRead::make(Tensor(), {}), InternalError);
}

TEST(IRNodes, Reduce) {
    Tensor t = make_tensor("T", {16});
    IterVar k = make_reduce_axis("k", 0, 16);
    Expr src = TensorRead::make(t, {k.var()});
    Expr e = Reduce::make(sum_reducer(), {src}, {k}, Expr(), 0);
    const auto* r = e.as<Reduce>();
    ASSERT_TRUE(r);
    EXPECT_EQ(e.type(), Float(32));
    EXPECT_TRUE(is_one(r->condition));  // no condition: true
    EXPECT_EQ(r->axis.size(), 1u);
    EXPECT_EQ(r->value_index, 0);
    EXPECT_THROW(Reduce::make(sum_reducer(), {src, src}, {k}, Expr(), 0), InternalError);
    EXPECT_THROW(Reduce::make(sum_reducer(), {src}, {k}, Expr(), 1), InternalError);
    EXPECT_THROW(Reduce::make(sum_reducer(), {src}, {k}, k.var(), 0), InternalError);
    IterVar data(Var("d"), Range(0, 16), IterVarKind::DataPar);
    EXPECT_THROW(Reduce::make(sum_reducer(), {src}, {data}, Expr(), 0), InternalError);
    EXPECT_THROW(Reduce::make(CommReducer(), {src}, {k}, Expr(), 0), InternalError);
    // A reducer needs one lhs, rhs and identity per result.
    Var x("x", Float(32)), y("y", Float(32));
    EXPECT_THROW(CommReducer("bad", {x}, {y}, {x + y, x * y}, {0.0f}), InternalError);
}

TEST(IRNodes, Load) {
    Var h("h", Handle()), i("i");
    Expr e = Load::make(Float(32), h, i);
    EXPECT_EQ(e.type(), Float(32));
    EXPECT_TRUE(e.as<Load>()->buffer_var.same_as(h));
    EXPECT_FALSE(e.as<Load>()->predicate.defined());
    Expr v = Load::make(Float(32, 4), h, Ramp::make(i, 1, 4), const_true(4));
    EXPECT_EQ(v.type(), Float(32, 4));
    EXPECT_THROW(Load::make(Float(32), Var("n"), i), InternalError);
    EXPECT_THROW(Load::make(Float(32, 4), h, i), InternalError);
    EXPECT_THROW(Load::make(Float(32), h, Var("f", Float(32))), InternalError);
    EXPECT_THROW(Load::make(Float(32, 4), h, Ramp::make(i, 1, 4), const_true()), InternalError);
    EXPECT_THROW(Load::make(Float(32), h, Expr()), InternalError);
}

TEST(IRNodes, BufferLoad) {
    Buffer b("B", Float(16), {8, 8});
    Var i("i");
    Expr e = BufferLoad::make(b, {i, i});
    EXPECT_EQ(e.type(), Float(16));
    EXPECT_TRUE(e.as<BufferLoad>()->buffer.same_as(b));
    EXPECT_EQ(BufferLoad::make(b, {i, Ramp::make(i, 1, 4)}).type(), Float(16, 4));
    EXPECT_THROW(BufferLoad::make(b, {i}), InternalError);
    EXPECT_THROW(BufferLoad::make(b, {i, Var("f", Float(32))}), InternalError);
    EXPECT_THROW(BufferLoad::make(Buffer(), {}), InternalError);
}

// ---------------------------------------------------------------------------------------------
// Statements

TEST(IRNodes, LetStmt) {
    Var x("x"), h("h", Handle());
    Stmt body = Store::make(h, x, x);
    Stmt s = LetStmt::make(x, 1, body);
    ASSERT_TRUE(s.as<LetStmt>());
    EXPECT_TRUE(s.as<LetStmt>()->var.same_as(x));
    EXPECT_TRUE(s.as<LetStmt>()->body.same_as(body));
    EXPECT_THROW(LetStmt::make(x, 1.0f, body), InternalError);
    EXPECT_THROW(LetStmt::make(x, 1, Stmt()), InternalError);
}

TEST(IRNodes, AttrStmt) {
    Var h("h", Handle());
    Stmt body = Store::make(h, 1, 0);
    Stmt s = AttrStmt::make("pragma_unroll", 8, body);
    ASSERT_TRUE(s.as<AttrStmt>());
    EXPECT_EQ(s.as<AttrStmt>()->key, "pragma_unroll");
    EXPECT_TRUE(is_const_int(s.as<AttrStmt>()->value, 8));
    EXPECT_THROW(AttrStmt::make("k", 1, Stmt()), InternalError);
}

TEST(IRNodes, AssertStmt) {
    Var i("i");
    Stmt s = AssertStmt::make(i < 4, "out of bounds");
    ASSERT_TRUE(s.as<AssertStmt>());
    EXPECT_EQ(s.as<AssertStmt>()->message, "out of bounds");
    EXPECT_THROW(AssertStmt::make(i, "m"), InternalError);
    EXPECT_THROW(AssertStmt::make(const_true(4), "m"), InternalError);
    EXPECT_THROW(AssertStmt::make(Expr(), "m"), InternalError);
}

TEST(IRNodes, For) {
    Var i("i"), h("h", Handle()), l("l", Int(64));
    Stmt body = Store::make(h, i, i);
    Stmt s = For::make(i, 0, 8, ForKind::ThreadBound, body, "threadIdx.x");
    const auto* f = s.as<For>();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->kind, ForKind::ThreadBound);
    EXPECT_EQ(f->thread_tag, "threadIdx.x");
    EXPECT_TRUE(is_const_int(f->extent, 8));
    EXPECT_STREQ(for_kind_name(ForKind::Vectorized), "vectorized");
    EXPECT_THROW(For::make(i, 0, 8, ForKind::Serial, body, "threadIdx.x"), InternalError);
    EXPECT_THROW(For::make(i, 0, 8, ForKind::ThreadBound, body), InternalError);
    EXPECT_THROW(For::make(i, Expr(int64_t(0)), 8, ForKind::Serial, body), InternalError);
    EXPECT_THROW(For::make(l, 0, 8, ForKind::Serial, body), InternalError);
    EXPECT_THROW(For::make(Var("f", Float(32)), 0.0f, 8.0f, ForKind::Serial, body), InternalError);
    EXPECT_THROW(For::make(i, 0, 8, ForKind::Serial, Stmt()), InternalError);
}

TEST(IRNodes, Store) {
    Var h("h", Handle()), i("i");
    Stmt s = Store::make(h, 1.0f, i);
    const auto* st = s.as<Store>();
    ASSERT_TRUE(st);
    EXPECT_TRUE(st->buffer_var.same_as(h));
    EXPECT_FALSE(st->predicate.defined());
    Expr idx = Ramp::make(i, 1, 4);
    Stmt v = Store::make(h, make_const(Float(32, 4), 1.0), idx, const_true(4));
    EXPECT_TRUE(v.as<Store>()->predicate.defined());
    EXPECT_THROW(Store::make(i, 1.0f, i), InternalError);
    EXPECT_THROW(Store::make(h, make_const(Float(32, 4), 1.0), i), InternalError);
    EXPECT_THROW(Store::make(h, make_const(Float(32, 4), 1.0), idx, const_true()), InternalError);
    EXPECT_THROW(Store::make(h, 1.0f, 1.0f), InternalError);
    EXPECT_THROW(Store::make(h, Expr(), i), InternalError);
}

TEST(IRNodes, BufferStore) {
    Buffer b("B", Float(32), {4, 4});
    Var i("i");
    Stmt s = BufferStore::make(b, 2.0f, {i, i});
    ASSERT_TRUE(s.as<BufferStore>());
    EXPECT_EQ(s.as<BufferStore>()->indices.size(), 2u);
    EXPECT_NO_THROW(BufferStore::make(b, make_const(Float(32, 4), 0.0), {i, Ramp::make(i, 1, 4)}));
    EXPECT_THROW(BufferStore::make(b, 2.0, {i, i}), InternalError);  // float64 into float32
    EXPECT_THROW(BufferStore::make(b, 2.0f, {i}), InternalError);
    EXPECT_THROW(BufferStore::make(b, 2.0f, {i, 1.0f}), InternalError);
    EXPECT_THROW(BufferStore::make(b, Expr(), {i, i}), InternalError);
}

TEST(IRNodes, Allocate) {
    Var t("t", Handle()), n("n");
    Stmt body = Store::make(t, 0.0f, 0);
    Stmt s = Allocate::make(t, Float(32), {n, 4}, StorageScope::Shared, body);
    const auto* a = s.as<Allocate>();
    ASSERT_TRUE(a);
    EXPECT_EQ(a->dtype, Float(32));
    EXPECT_EQ(a->scope, StorageScope::Shared);
    EXPECT_EQ(a->extents.size(), 2u);
    EXPECT_STREQ(scope_name(StorageScope::Local), "local");
    EXPECT_THROW(Allocate::make(n, Float(32), {4}, StorageScope::Local, body), InternalError);
    EXPECT_THROW(Allocate::make(t, Float(32), {4.0f}, StorageScope::Local, body), InternalError);
    EXPECT_THROW(Allocate::make(t, Float(32), {Expr()}, StorageScope::Local, body), InternalError);
    EXPECT_THROW(Allocate::make(t, Float(32), {4}, StorageScope::Local, Stmt()), InternalError);
}

TEST(IRNodes, Seq) {
    Var h("h", Handle());
    Stmt a = Store::make(h, 1, 0), b = Store::make(h, 2, 0), c = Store::make(h, 3, 0);
    Stmt s = Seq::make({a, Seq::make({b, c})});
    ASSERT_TRUE(s.as<Seq>());
    ASSERT_EQ(s.as<Seq>()->stmts.size(), 3u);  // flattened
    EXPECT_TRUE(s.as<Seq>()->stmts[2].same_as(c));
    EXPECT_TRUE(Seq::make({a}).same_as(a));
    EXPECT_THROW(Seq::make({}), InternalError);
    EXPECT_THROW(Seq::make({a, Stmt()}), InternalError);
}

TEST(IRNodes, IfThenElse) {
    Var i("i"), h("h", Handle());
    Stmt a = Store::make(h, 1, i);
    Stmt s = IfThenElse::make(i < 2, a);
    ASSERT_TRUE(s.as<IfThenElse>());
    EXPECT_FALSE(s.as<IfThenElse>()->else_case.defined());
    EXPECT_TRUE(IfThenElse::make(i < 2, a, a).as<IfThenElse>()->else_case.same_as(a));
    EXPECT_THROW(IfThenElse::make(i, a), InternalError);
    EXPECT_THROW(IfThenElse::make(const_true(4), a), InternalError);
    EXPECT_THROW(IfThenElse::make(i < 2, Stmt(), a), InternalError);
}

TEST(IRNodes, Evaluate) {
    Expr barrier = Call::make(Intrinsic::thread_barrier, {});
    Stmt s = Evaluate::make(barrier);
    ASSERT_TRUE(s.as<Evaluate>());
    EXPECT_TRUE(s.as<Evaluate>()->value.same_as(barrier));
    EXPECT_THROW(Evaluate::make(Expr()), InternalError);
}

// ---------------------------------------------------------------------------------------------
// Traversal

namespace {
// Counts visits per node kind.
class Counter : public IRVisitor {
public:
    using IRVisitor::visit;
    std::map<IRNodeType, int> count;
    void visit(const Expr& e) override {
        if (e.defined()) ++count[e.node_type()];
        IRVisitor::visit(e);
    }
    void visit(const Stmt& s) override {
        if (s.defined()) ++count[s.node_type()];
        IRVisitor::visit(s);
    }
};

// Replaces the integer constant 1 by 2.
class OneToTwo : public IRMutator {
public:
    using IRMutator::visit;

protected:
    Expr visit(const IntImm* op) override {
        if (op->value == 1 && op->type == Int(32)) return Expr(2);
        return op;
    }
};
}  // namespace

TEST(IRVisitor, VisitsChildrenIncludingAxisDomainsAndExtents) {
    Var i("i"), n("n"), t("t", Handle());
    Tensor T = make_tensor("T", {16});
    IterVar k = make_reduce_axis("k", n, 16);
    Expr red =
        Reduce::make(sum_reducer(), {TensorRead::make(T, {k.var() + i})}, {k}, k.var() < n, 0);
    Stmt s = For::make(
        i, 0, 4, ForKind::Serial,
        Allocate::make(t, Float(32), {n * 2}, StorageScope::Local, Store::make(t, red, i, Expr())));
    Counter c;
    c.visit(s);
    EXPECT_EQ(c.count[IRNodeType::For], 1);
    EXPECT_EQ(c.count[IRNodeType::Allocate], 1);
    EXPECT_EQ(c.count[IRNodeType::Store], 1);
    EXPECT_EQ(c.count[IRNodeType::Reduce], 1);
    EXPECT_EQ(c.count[IRNodeType::TensorRead], 1);
    EXPECT_EQ(c.count[IRNodeType::Mul], 1);  // the Allocate extent
    // n: axis min, Allocate extent, condition; k: index, condition; i: index, store index.
    EXPECT_EQ(c.count[IRNodeType::Variable], 7);
}

TEST(IRVisitor, PostOrderVisitsChildrenFirst) {
    Var a("a"), b("b"), c("c");
    Expr e = (a + b) * c;
    std::vector<const IRNode*> order;
    post_order_visit(e, [&](const IRNode* n) { order.push_back(n); });
    const Mul* mul = e.as<Mul>();
    ASSERT_EQ(order.size(), 5u);
    EXPECT_EQ(order[0], a.get());
    EXPECT_EQ(order[1], b.get());
    EXPECT_EQ(order[2], mul->a.get());
    EXPECT_EQ(order[3], c.get());
    EXPECT_EQ(order[4], e.get());
    Var h("h", Handle());
    Stmt s = Seq::make({Store::make(h, a, 0), Evaluate::make(b)});
    std::vector<IRNodeType> kinds;
    post_order_visit(s, [&](const IRNode* n) { kinds.push_back(n->node_type); });
    std::vector<IRNodeType> want = {IRNodeType::Variable, IRNodeType::IntImm,   IRNodeType::Store,
                                    IRNodeType::Variable, IRNodeType::Evaluate, IRNodeType::Seq};
    EXPECT_EQ(kinds, want);
}

TEST(IRVisitor, UsesVar) {
    Var a("a"), b("b"), h("h", Handle());
    EXPECT_TRUE(uses_var(a + 1, a));
    EXPECT_FALSE(uses_var(a + 1, b));
    EXPECT_TRUE(uses_var(Load::make(Float(32), h, a), h));
    EXPECT_TRUE(uses_var(Store::make(h, 1, 0), h));
    EXPECT_FALSE(uses_var(Store::make(h, 1, 0), a));
}

TEST(IRMutator, SameNodeWhenNothingChanges) {
    Var i("i"), h("h", Handle());
    Stmt s = For::make(i, 0, 8, ForKind::Serial, Store::make(h, i * 3 + 4, i));
    OneToTwo m;
    EXPECT_TRUE(m.mutate(s).same_as(s));
    Expr e = i * 3 + 4;
    EXPECT_TRUE(m.mutate(e).same_as(e));
    EXPECT_FALSE(m.mutate(Expr()).defined());
}

TEST(IRMutator, NewNodeWhenSomethingChanges) {
    Var i("i"), h("h", Handle());
    Stmt keep = Store::make(h, 7, i);
    Stmt s = Seq::make({keep, For::make(i, 0, 8, ForKind::Parallel, Store::make(h, i + 1, i))});
    OneToTwo m;
    Stmt out = m.mutate(s);
    EXPECT_FALSE(out.same_as(s));
    ASSERT_TRUE(out.as<Seq>());
    EXPECT_TRUE(out.as<Seq>()->stmts[0].same_as(keep));  // untouched siblings are shared
    const For* f = out.as<Seq>()->stmts[1].as<For>();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->kind, ForKind::Parallel);
    EXPECT_TRUE(f->loop_var.same_as(i));
    EXPECT_EQ(to_string(out), "h[i] = 7\nfor i in parallel(0, 8):\n    h[i] = i + 2\n");
    // Reduce axis domains are rewritten too.
    Tensor T = make_tensor("T", {16});
    IterVar k = make_reduce_axis("k", 1, 8);
    Expr red = Reduce::make(sum_reducer(), {TensorRead::make(T, {k.var()})}, {k}, Expr(), 0);
    EXPECT_EQ(to_string(m.mutate(red)), "sum(T[k], axis=[k in range(2, 10)])");
}

TEST(Substitute, ReplacesFreeOccurrences) {
    Var x("x"), y("y"), h("h", Handle());
    Expr e = x * 2 + y;
    Expr out = substitute(e, x, y + 1);
    EXPECT_EQ(to_string(out), "(y + 1) * 2 + y");
    EXPECT_TRUE(substitute(e, VarMap{}).same_as(e));
    EXPECT_TRUE(substitute(e, Var("z"), Expr(1)).same_as(e));
    Stmt s = Store::make(h, x, x);
    EXPECT_EQ(to_string(substitute(s, VarMap{{x.get(), Expr(5)}})), "h[5] = 5\n");
    EXPECT_THROW(substitute(e, x, Expr(1.0f)), InternalError);
}

TEST(Substitute, LeavesBoundOccurrencesAlone) {
    Var x("x"), h("h", Handle());
    // x + (let x = 1 in x): only the outer x is free.
    Expr e = x + Let::make(x, 1, x);
    EXPECT_EQ(to_string(substitute(e, x, Expr(7))), "7 + (let x = 1 in x)");
    Stmt loop = For::make(x, 0, 4, ForKind::Serial, Store::make(h, x, x));
    EXPECT_TRUE(substitute(loop, x, Expr(7)).same_as(loop));
    Stmt let = LetStmt::make(x, 3, Store::make(h, x, x));
    EXPECT_TRUE(substitute(let, x, Expr(7)).same_as(let));
    Tensor T = make_tensor("T", {16});
    IterVar k = make_reduce_axis("k", 0, 16);
    Expr red = Reduce::make(sum_reducer(), {TensorRead::make(T, {k.var()})}, {k}, Expr(), 0);
    EXPECT_TRUE(substitute(red, k.var(), Expr(3)).same_as(red));
}

// ---------------------------------------------------------------------------------------------
// Constants and types

TEST(Constants, MakeConstWrapsIntegers) {
    EXPECT_EQ(as_const_int(make_const(Int(8), 200)), -56);
    EXPECT_EQ(as_const_int(make_const(Int(8), -129)), 127);
    EXPECT_EQ(as_const_int(make_const(UInt(8), -1)), 255);
    EXPECT_EQ(as_const_int(make_const(UInt(16), 65536 + 5)), 5);
    EXPECT_EQ(as_const_int(make_const(Int(32), int64_t(1) << 32)), 0);
    EXPECT_EQ(as_const_int(make_const(Bool(), 5)), 1);
    EXPECT_EQ(make_const(UInt(64), int64_t(-1)).as<UIntImm>()->value, ~uint64_t(0));
    EXPECT_EQ(as_const_int(make_const(UInt(64), int64_t(-1))), std::nullopt);  // > INT64_MAX
    EXPECT_EQ(make_const(Float(32), 3).type(), Float(32));
    EXPECT_EQ(as_const_float(make_const(Float(32), 3)), 3.0);
    EXPECT_EQ(as_const_int(make_const(Int(32), 3.0)), 3);
    EXPECT_THROW(make_const(Int(32), 3.5), InternalError);
    EXPECT_THROW(make_const(Handle(), 0), InternalError);
    Expr v = make_const(Int(16, 4), 70000);
    ASSERT_TRUE(v.as<Broadcast>());
    EXPECT_EQ(v.type(), Int(16, 4));
    EXPECT_EQ(as_const_int(v), 70000 - 65536);
    EXPECT_TRUE(is_zero(make_zero(Float(64))) == false);  // is_zero is for integers
    EXPECT_EQ(as_const_float(make_zero(Float(64))), 0.0);
    EXPECT_TRUE(is_one(make_one(Int(64))));
    EXPECT_TRUE(is_one(const_true()));
    EXPECT_TRUE(is_zero(const_false(4)));
    EXPECT_EQ(const_true(4).type(), Bool(4));
}

TEST(Constants, Float16AndBFloat16RoundToNearestEven) {
    auto f16 = [](double v) { return *as_const_float(make_const(Float(16), v)); };
    auto bf16 = [](double v) { return *as_const_float(make_const(BFloat(16), v)); };
    EXPECT_EQ(f16(0.1), 0.0999755859375);
    EXPECT_EQ(f16(65504.0), 65504.0);
    EXPECT_EQ(f16(65519.0), 65504.0);
    EXPECT_TRUE(std::isinf(f16(65520.0)));
    EXPECT_EQ(f16(1.0 + std::ldexp(1.0, -11)), 1.0);                            // tie -> even
    EXPECT_EQ(f16(1.0 + 3 * std::ldexp(1.0, -11)), 1.0 + std::ldexp(1.0, -9));  // tie -> even
    EXPECT_EQ(f16(std::ldexp(1.0, -24)), std::ldexp(1.0, -24));                 // subnormal
    EXPECT_EQ(f16(std::ldexp(1.0, -25)), 0.0);                                  // tie -> 0
    EXPECT_EQ(f16(3 * std::ldexp(1.0, -25)), std::ldexp(1.0, -23));
    EXPECT_EQ(f16(-2.5), -2.5);
    EXPECT_EQ(bf16(1.0 + std::ldexp(1.0, -8)), 1.0);                            // tie -> even
    EXPECT_EQ(bf16(1.0 + 3 * std::ldexp(1.0, -8)), 1.0 + std::ldexp(1.0, -6));  // tie -> even
    EXPECT_EQ(bf16(3.14159265), 3.140625);
    EXPECT_TRUE(std::isnan(bf16(std::nan(""))));
    EXPECT_TRUE(std::isinf(bf16(std::numeric_limits<double>::infinity())));
    EXPECT_EQ(*as_const_float(make_const(Float(32), 0.1)), static_cast<double>(0.1f));
    EXPECT_EQ(round_to_float_type(0.1, Float(64)), 0.1);
    EXPECT_THROW(round_to_float_type(0.1, Int(32)), InternalError);
    EXPECT_EQ(wrap_to_int_type(300, UInt(8)), 44);
}

TEST(Types, StrAndParseRoundTrip) {
    std::vector<Type> types = {Int(8),       Int(16),       Int(32),  Int(64),     UInt(8),
                               UInt(16),     UInt(32),      UInt(64), Float(16),   Float(32),
                               Float(64),    BFloat(16),    Bool(),   Handle(),    Int(32, 4),
                               Float(16, 8), BFloat(16, 2), Bool(16), UInt(8, 64), Int(64, 65535)};
    for (Type t : types) {
        EXPECT_EQ(Type::parse(t.str()), t) << t.str();
        std::ostringstream os;
        os << t;
        EXPECT_EQ(os.str(), t.str());
    }
    EXPECT_EQ(Float(32, 4).str(), "float32x4");
    EXPECT_EQ(Bool().str(), "bool");
    EXPECT_EQ(BFloat(16).str(), "bfloat16");
    EXPECT_EQ(Type::parse("int32x1"), Int(32));
    EXPECT_EQ(Int(8).max_int(), 127);
    EXPECT_EQ(Int(8).min_int(), -128);
    EXPECT_EQ(UInt(64).max_int(), std::numeric_limits<int64_t>::max());
    EXPECT_EQ(Float(16).epsilon(), 1.0 / 1024);
    EXPECT_EQ(Bool(4).bytes(), 1);
    EXPECT_EQ(Int(32, 4).element_of(), Int(32));
}

TEST(Types, ParseRejectsUnknownNames) {
    for (const char* bad : {"", "foo", "int", "int7", "int128", "float8", "bfloat32", "uint1",
                            "int32x", "int32x0", "int32x65536", "int32x4x", "int32x 4", "int32x+4",
                            "handlex2", "Float32", "float32 ", "xint32"}) {
        EXPECT_THROW(Type::parse(bad), DSLError) << "'" << bad << "'";
    }
}

namespace tessel {
namespace {

TEST(IRLifetime, DeepTreesAreDestroyedWithoutRecursion) {
    // A million-node chain would overflow the stack if each node deleted its child recursively.
    Var x("x");
    Expr e = x;
    for (int i = 0; i < 1000000; ++i) e = Add::make(e, Expr(1));
    EXPECT_EQ(e.as<Add>()->b.type(), Int(32));
    e = Expr();  // must not crash
    SUCCEED();
}

}  // namespace
}  // namespace tessel
