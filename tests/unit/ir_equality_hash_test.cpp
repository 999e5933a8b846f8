// structural_equal and structural_hash: alpha-equivalence, free variables, and what tells trees
// apart. No hash value is hard-coded; the tests check relations between hashes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>

#include "ir_test_util.h"
#include "tessel/ir/Equality.h"
#include "tessel/ir/Hash.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"

using namespace tessel;
using namespace tessel::test;

namespace {

// A matmul-like nest over fresh loop variables, reading and writing the given buffers.
Stmt matmul(const Buffer& A, const Buffer& B, const Buffer& C, ForKind outer = ForKind::Parallel) {
    Var i("i"), j("j"), k("k");
    Expr update =
        BufferLoad::make(C, {i, j}) + BufferLoad::make(A, {i, k}) * BufferLoad::make(B, {k, j});
    return For::make(
        i, 0, 16, outer,
        For::make(j, 0, 16, ForKind::Serial,
                  For::make(k, 0, 8, ForKind::Serial, BufferStore::make(C, update, {i, j}))));
}

// Both equal (in both modes) and of equal hash.
template <typename T>
void expect_same(const T& a, const T& b) {
    EXPECT_TRUE(structural_equal(a, b)) << a << "\nvs\n" << b;
    EXPECT_TRUE(structural_equal(a, b, true)) << a << "\nvs\n" << b;
    EXPECT_EQ(structural_hash(a), structural_hash(b)) << a << "\nvs\n" << b;
}

// Different in both modes and (for these small, different trees) of different hash.
template <typename T>
void expect_different(const T& a, const T& b) {
    EXPECT_FALSE(structural_equal(a, b)) << a << "\nvs\n" << b;
    EXPECT_FALSE(structural_equal(a, b, true)) << a << "\nvs\n" << b;
    EXPECT_NE(structural_hash(a), structural_hash(b)) << a << "\nvs\n" << b;
}

}  // namespace

TEST(StructuralEqual, AlphaEquivalentLoopNests) {
    Buffer A("A", Float(32), {16, 8}), B("B", Float(32), {8, 16}), C("C", Float(32), {16, 16});
    Stmt s1 = matmul(A, B, C), s2 = matmul(A, B, C);
    EXPECT_NE(to_string(s1), "");
    expect_same(s1, s2);
    expect_same(s1, s1);
}

TEST(StructuralEqual, LetAllocateAndReduceBindersAreRenamed) {
    Var x("x"), y("y"), n("n");
    expect_same(Let::make(x, n + 1, x * x), Let::make(y, n + 1, y * y));
    expect_different(Let::make(x, n + 1, x * x), Let::make(y, n + 1, y * n));

    Var a("a", Handle()), b("b", Handle()), i("i");
    auto alloc = [&](const Var& buf) {
        return Allocate::make(buf, Float(32), {n}, StorageScope::Local,
                              Store::make(buf, Load::make(Float(32), buf, i) + 1.0f, i));
    };
    expect_same(alloc(a), alloc(b));
    expect_same(LetStmt::make(x, n, Store::make(a, cast(Float(32), x), x)),
                LetStmt::make(y, n, Store::make(a, cast(Float(32), y), y)));

    Tensor T = make_tensor("T", {16, 16});
    auto sum = [&](const std::string& name) {
        IterVar k = make_reduce_axis(name, 0, 16);
        return Reduce::make(sum_reducer(), {TensorRead::make(T, {i, k.var()})}, {k}, k.var() < 8,
                            0);
    };
    expect_same(sum("k"), sum("r"));
}

TEST(StructuralEqual, ReducersCompareByStructureNotName) {
    Tensor T = make_tensor("T", {16});
    IterVar k = make_reduce_axis("k", 0, 16);
    auto reduce = [&](const CommReducer& c) {
        return Reduce::make(c, {TensorRead::make(T, {k.var()})}, {k}, Expr(), 0);
    };
    expect_same(reduce(sum_reducer(Float(32), "sum")), reduce(sum_reducer(Float(32), "add")));
    Var x("x", Float(32)), y("y", Float(32));
    CommReducer prod("sum", {x}, {y}, {x * y}, {make_one(Float(32))});
    expect_different(reduce(sum_reducer()), reduce(prod));
    CommReducer sum_one("sum", {x}, {y}, {x + y}, {make_one(Float(32))});
    expect_different(reduce(sum_reducer()), reduce(sum_one));
}

TEST(StructuralEqual, ShadowingAndRebinding) {
    Var x("x"), y("y"), z("z"), w("w");
    // let x = 1 in (let x = 2 in x)  vs  let y = 1 in (let z = 2 in z): equal.
    expect_same(Let::make(x, 1, Let::make(x, 2, x)), Let::make(y, 1, Let::make(z, 2, z)));
    // ... vs let y = 1 in (let z = 2 in y): the inner x refers to the inner binder.
    expect_different(Let::make(x, 1, Let::make(x, 2, x)), Let::make(y, 1, Let::make(z, 2, y)));
    // let x = 1 in (let w = 2 in x)  vs  let y = 1 in (let y = 2 in y): y is shadowed in b.
    expect_different(Let::make(x, 1, Let::make(w, 2, x)), Let::make(y, 1, Let::make(y, 2, y)));
    // One variable bound twice in sequence matches two distinct ones.
    Var a("a", Handle());
    auto loop = [&](const Var& v) {
        return For::make(v, 0, 4, ForKind::Serial, Store::make(a, v, v));
    };
    expect_same(Seq::make({loop(x), loop(x)}), Seq::make({loop(y), loop(z)}));
}

TEST(StructuralEqual, BoundAndFreeVariablesDoNotMatch) {
    Var i("i"), x("x"), a("a", Handle());
    // for i: a[i] = x   vs   for x: a[x] = x  (x free on the left, bound on the right).
    Stmt l = For::make(i, 0, 4, ForKind::Serial, Store::make(a, x, i));
    Stmt r = For::make(x, 0, 4, ForKind::Serial, Store::make(a, x, x));
    expect_different(l, r);
    // The same Var free on one side and bound on the other.
    Expr e1 = x + Let::make(i, 1, i);
    Expr e2 = i + Let::make(i, 1, i);
    EXPECT_FALSE(structural_equal(e1, e2));
    EXPECT_TRUE(structural_equal(e1, e2, true));
    EXPECT_EQ(structural_hash(e1), structural_hash(e2));
}

TEST(StructuralEqual, FreeVariablesByIdentityOrByBijection) {
    Var x("x"), y("y"), x2("x");
    EXPECT_TRUE(structural_equal(x + 1, x + 1));
    EXPECT_FALSE(structural_equal(x + 1, x2 + 1));  // same name, different variable
    EXPECT_TRUE(structural_equal(x + 1, x2 + 1, true));
    EXPECT_TRUE(structural_equal(x + y, y + x, true));  // x <-> y consistently
    EXPECT_FALSE(structural_equal(x + y, y + x));
    // The correspondence must be one-to-one and consistent.
    EXPECT_FALSE(structural_equal(x + x, x + y, true));
    EXPECT_FALSE(structural_equal(x + y, x + x, true));
    EXPECT_TRUE(structural_equal(x * y + x, y * x + y, true));
    EXPECT_FALSE(structural_equal(x * y + x, y * x + x, true));
    // The hash ignores identity and names of free variables, but not the pattern.
    EXPECT_EQ(structural_hash(x + 1), structural_hash(x2 + 1));
    EXPECT_EQ(structural_hash(x + y), structural_hash(y + x));
    EXPECT_NE(structural_hash(x + x), structural_hash(x + y));
    // Types of variables matter.
    Var xl("x", Int(64));
    EXPECT_FALSE(structural_equal(Expr(x), Expr(xl), true));
    EXPECT_NE(structural_hash(Expr(x)), structural_hash(Expr(xl)));
}

TEST(StructuralEqual, BuffersCompareByFieldsAndStorage) {
    Buffer A("A", Float(32), {16, 8}), B("B", Float(32), {8, 16}), C("C", Float(32), {16, 16});
    Buffer A2("A", Float(32), {16, 8}), B2("B", Float(32), {8, 16}), C2("C", Float(32), {16, 16});
    Stmt s1 = matmul(A, B, C), s2 = matmul(A2, B2, C2);
    // Fresh buffers have fresh (free) data variables: different storage.
    EXPECT_FALSE(structural_equal(s1, s2));
    EXPECT_TRUE(structural_equal(s1, s2, true));
    EXPECT_EQ(structural_hash(s1), structural_hash(s2));
    // A buffer sharing A's storage and fields is the same buffer, whatever its name.
    auto copy_of = [](const Buffer& b, const std::string& name) {
        auto* n = new BufferNode();
        n->data = b->data;
        n->dtype = b->dtype;
        n->shape = b->shape;
        n->strides = b->strides;
        n->elem_offset = b->elem_offset;
        n->name = name;
        n->scope = b->scope;
        return Buffer(n);
    };
    Buffer Aview = copy_of(A, "A_view");
    EXPECT_TRUE(structural_equal(matmul(A, B, C), matmul(Aview, B, C)));
    // Different dtype, shape or scope: different buffers.
    Buffer Ah("A", Float(16), {16, 8}), Ashape("A", Float(32), {16, 4});
    Buffer Ashared("A", Float(32), {16, 8}, StorageScope::Shared);
    Var i("i");
    Expr load = BufferLoad::make(A, {i, i});
    EXPECT_FALSE(structural_equal(load, BufferLoad::make(Ah, {i, i}), true));
    EXPECT_FALSE(structural_equal(load, BufferLoad::make(Ashape, {i, i}), true));
    EXPECT_FALSE(structural_equal(load, BufferLoad::make(Ashared, {i, i}), true));
    EXPECT_TRUE(structural_equal(load, BufferLoad::make(A2, {i, i}), true));
    EXPECT_NE(structural_hash(load), structural_hash(BufferLoad::make(Ashared, {i, i})));
    EXPECT_NE(structural_hash(load), structural_hash(BufferLoad::make(Ashape, {i, i})));
    // Two distinct free buffers cannot both correspond to one.
    EXPECT_FALSE(structural_equal(BufferLoad::make(A, {i, i}) + BufferLoad::make(A, {i, i}),
                                  BufferLoad::make(A, {i, i}) + BufferLoad::make(A2, {i, i}),
                                  true));
}

TEST(StructuralEqual, BufferOfAnAllocatedVariableIsBound) {
    // allocate t; T[i] = 1  (T a buffer over t): equal to the same program over another t.
    auto program = [](const std::string& name) {
        Buffer T(name, Float(32), {8}, StorageScope::Local);
        Var i("i");
        Stmt body = For::make(i, 0, 8, ForKind::Serial, BufferStore::make(T, 1.0f, {i}));
        return Allocate::make(T->data, Float(32), {8}, StorageScope::Local, body);
    };
    expect_same(program("T"), program("U"));
}

TEST(StructuralEqual, TensorsByIdentityOrBijection) {
    Tensor A = make_tensor("A", {8}), A2 = make_tensor("A", {8}), B = make_tensor("B", {8});
    Tensor H = make_tensor("A", {8}, Float(16)), S = make_tensor("A", {4});
    Var i("i");
    auto rd = [&](const Tensor& t) { return TensorRead::make(t, {i}); };
    EXPECT_TRUE(structural_equal(rd(A), rd(A)));
    EXPECT_FALSE(structural_equal(rd(A), rd(A2)));
    EXPECT_TRUE(structural_equal(rd(A), rd(A2), true));
    EXPECT_TRUE(structural_equal(rd(A) * rd(B), rd(B) * rd(A), true));
    EXPECT_FALSE(structural_equal(rd(A) * rd(A), rd(A) * rd(B), true));
    EXPECT_FALSE(structural_equal(rd(A), rd(S), true));
    EXPECT_FALSE(structural_equal(cast(Float(16), rd(A)), rd(H), true));
    EXPECT_EQ(structural_hash(rd(A)), structural_hash(rd(A2)));
    EXPECT_EQ(structural_hash(rd(A) * rd(B)), structural_hash(rd(B) * rd(A)));
    EXPECT_NE(structural_hash(rd(A) * rd(A)), structural_hash(rd(A) * rd(B)));
    EXPECT_NE(structural_hash(rd(A)), structural_hash(rd(S)));
    // The op's value_index is part of the tensor.
    auto* n = new TensorNode();
    n->op = A.op();
    n->value_index = 1;
    n->shape = {8};
    n->dtype = Float(32);
    n->name = "A";
    Tensor A1(n);
    EXPECT_FALSE(structural_equal(rd(A), rd(A1), true));
    EXPECT_NE(structural_hash(rd(A)), structural_hash(rd(A1)));
}

TEST(StructuralEqual, ConstantsCompareBitExactly) {
    expect_different(Expr(1), Expr(2));
    expect_different(Expr(1), Expr(int64_t(1)));
    expect_different(Expr(1.0f), Expr(1.0));
    expect_different(make_const(Float(16), 1.0), make_const(BFloat(16), 1.0));
    expect_different(Expr(0.0f), Expr(-0.0f));
    expect_different(make_const(UInt(8), 1), make_const(Int(8), 1));
    expect_same(make_const(Float(32), std::nan("")), make_const(Float(32), std::nan("")));
    double other_nan = std::nan("");
    uint64_t bits;
    std::memcpy(&bits, &other_nan, sizeof bits);
    bits ^= 1;  // another payload
    std::memcpy(&other_nan, &bits, sizeof bits);
    expect_different(FloatImm::make(Float(64), std::nan("")), FloatImm::make(Float(64), other_nan));
    expect_different(const_true(), const_false());
    expect_different(make_const(Float(32, 4), 1.0), make_const(Float(32, 8), 1.0));
}

TEST(StructuralEqual, OperatorsAndTypesDiffer) {
    Var a("a"), b("b"), f("f", Float(32));
    expect_same(a + b, a + b);
    expect_different(a + b, a - b);
    expect_different(a + 1, 1 + a);
    EXPECT_FALSE(structural_equal(a + b, b + a));  // (equal when free variables are mapped)
    expect_different(a / b, truncdiv(a, b));
    expect_different(a % b, truncmod(a, b));
    expect_different(min(a, b), max(a, b));
    expect_different(a < b, a <= b);
    expect_different(a<b, b> a);
    expect_different(exp(f), log(f));
    expect_different(cast(Float(32), a), cast(Float(64), a));
    expect_different(Ramp::make(a, 1, 4), Ramp::make(a, 1, 8));
    expect_different(Broadcast::make(a, 4), Ramp::make(a, 0, 4));
    expect_different(select(a < b, a, b), if_then_else(a < b, a, b));
    Var h("h", Handle());
    expect_different(Load::make(Float(32), h, a), Load::make(Int(32), h, a));
    expect_different(Load::make(Float(32), h, a), Load::make(Float(32), h, a, const_true()));
}

TEST(StructuralEqual, StatementsDiffer) {
    Var i("i"), a("a", Handle());
    Stmt body = Store::make(a, i, i);
    auto loop = [&](ForKind k, const std::string& tag = "") {
        return For::make(i, 0, 4, k, body, tag);
    };
    expect_different(loop(ForKind::Serial), loop(ForKind::Parallel));
    expect_different(loop(ForKind::Vectorized), loop(ForKind::Unrolled));
    expect_different(loop(ForKind::ThreadBound, "threadIdx.x"),
                     loop(ForKind::ThreadBound, "threadIdx.y"));
    expect_different(For::make(i, 0, 4, ForKind::Serial, body),
                     For::make(i, 0, 5, ForKind::Serial, body));
    expect_different(For::make(i, 0, 4, ForKind::Serial, body),
                     For::make(i, 1, 4, ForKind::Serial, body));
    Var t("t", Handle());
    auto alloc = [&](Type dt, StorageScope sc, Expr ext) {
        return Allocate::make(t, dt, {ext}, sc, body);
    };
    expect_different(alloc(Float(32), StorageScope::Local, 4),
                     alloc(Float(32), StorageScope::Shared, 4));
    expect_different(alloc(Float(32), StorageScope::Local, 4),
                     alloc(Float(16), StorageScope::Local, 4));
    expect_different(alloc(Float(32), StorageScope::Local, 4),
                     alloc(Float(32), StorageScope::Local, 8));
    expect_different(AttrStmt::make("k1", 1, body), AttrStmt::make("k2", 1, body));
    expect_different(AttrStmt::make("k1", 1, body), AttrStmt::make("k1", 2, body));
    expect_different(AttrStmt::make("k1", 1, body), AttrStmt::make("k1", Expr(), body));
    expect_different(AssertStmt::make(i < 4, "m1"), AssertStmt::make(i < 4, "m2"));
    Stmt other = Store::make(a, i + 1, i);
    expect_different(Seq::make({body, other}), Seq::make({other, body}));
    expect_different(Seq::make({body, other}), Seq::make({body, other, body}));
    expect_different(IfThenElse::make(i < 2, body), IfThenElse::make(i < 2, body, other));
    expect_different(IfThenElse::make(i < 2, body, other), IfThenElse::make(i < 2, other, body));
    expect_different(Evaluate::make(i), Evaluate::make(i + 0));
    expect_different(body, Evaluate::make(i));
    expect_same(Seq::make({body, other}), Seq::make({body, other}));
}

TEST(StructuralEqual, UndefinedHandles) {
    EXPECT_TRUE(structural_equal(Expr(), Expr()));
    EXPECT_FALSE(structural_equal(Expr(), Expr(1)));
    EXPECT_FALSE(structural_equal(Expr(1), Expr()));
    EXPECT_TRUE(structural_equal(Stmt(), Stmt()));
    EXPECT_EQ(structural_hash(Expr()), structural_hash(Expr()));
}

TEST(StructuralHash, DeterministicAndSpreads) {
    Buffer A("A", Float(32), {16, 8}), B("B", Float(32), {8, 16}), C("C", Float(32), {16, 16});
    Stmt s = matmul(A, B, C);
    uint64_t h = structural_hash(s);
    EXPECT_EQ(h, structural_hash(s));
    EXPECT_EQ(h, structural_hash(matmul(A, B, C)));
    EXPECT_NE(h, structural_hash(matmul(A, B, C, ForKind::Serial)));
    // Small constants hash apart from each other.
    std::set<uint64_t> seen;
    for (int v = 0; v < 1000; ++v) seen.insert(structural_hash(Expr(v)));
    EXPECT_EQ(seen.size(), 1000u);
}

TEST(StructuralHash, HasherSharesNumberingAcrossTrees) {
    Var i("i"), j("j");
    // A variable shared by two trees is recognised as one.
    uint64_t same = StructuralHasher().add(i + 1).add(i * 2).result();
    uint64_t diff = StructuralHasher().add(i + 1).add(j * 2).result();
    EXPECT_NE(same, diff);
    Var k("k");
    EXPECT_EQ(same, StructuralHasher().add(k + 1).add(k * 2).result());
    EXPECT_EQ(structural_hash(i + 1), StructuralHasher().add(i + 1).result());
    // Binders, tensors, ints and strings.
    Tensor T = make_tensor("T", {4});
    uint64_t h1 =
        StructuralHasher().add_binder(i).add(T).add_int(3).add_string("x").add(i).result();
    uint64_t h2 = StructuralHasher()
                      .add_binder(j)
                      .add(make_tensor("U", {4}))
                      .add_int(3)
                      .add_string("x")
                      .add(j)
                      .result();
    uint64_t h3 =
        StructuralHasher().add_binder(j).add(T).add_int(3).add_string("y").add(j).result();
    EXPECT_EQ(h1, h2);
    EXPECT_NE(h1, h3);
}

namespace {

// Rebuilds an expression with fresh Let variables and free variables replaced by `free_map`.
class Renamer : public IRMutator {
public:
    explicit Renamer(VarMap free_map) : map_(std::move(free_map)) {}
    using IRMutator::visit;

protected:
    Expr visit(const Variable* op) override {
        auto it = map_.find(op);
        return it == map_.end() ? Expr(op) : it->second;
    }
    Expr visit(const Let* op) override {
        Var fresh(op->var.name() + "_renamed", op->var.type());
        Expr value = mutate(op->value);
        VarMap saved = map_;  // the binder may shadow a mapped free variable
        map_[op->var.get()] = fresh;
        Expr body = mutate(op->body);
        map_ = saved;
        return Let::make(fresh, value, body);
    }

private:
    VarMap map_;
};

// A random int32 expression over `vars`, with nested Lets that may shadow them.
Expr random_expr(std::mt19937* rng, std::vector<Var>* vars, int depth) {
    std::uniform_int_distribution<int> pick(0, depth > 0 ? 6 : 1);
    switch (pick(*rng)) {
        case 0: return Expr(int((*rng)() % 5));
        case 1: return (*vars)[(*rng)() % vars->size()];
        case 2: return random_expr(rng, vars, depth - 1) + random_expr(rng, vars, depth - 1);
        case 3: return random_expr(rng, vars, depth - 1) * random_expr(rng, vars, depth - 1);
        case 4: return min(random_expr(rng, vars, depth - 1), random_expr(rng, vars, depth - 1));
        default: {
            // Sometimes rebind an existing variable (shadowing), sometimes a new one.
            Var v = ((*rng)() % 3 == 0) ? (*vars)[(*rng)() % vars->size()] : Var("t");
            Expr value = random_expr(rng, vars, depth - 1);
            vars->push_back(v);
            Expr body = random_expr(rng, vars, depth - 1);
            vars->pop_back();
            return Let::make(v, value, body);
        }
    }
}

}  // namespace

TEST(StructuralHash, ConsistentWithEqualityOnRandomRenamedTrees) {
    std::mt19937 rng(1234);
    for (int trial = 0; trial < 300; ++trial) {
        std::vector<Var> vars = {Var("a"), Var("b"), Var("c")};
        Expr e = random_expr(&rng, &vars, 5);
        VarMap fresh_free;
        for (const Var& v : vars) fresh_free[v.get()] = Var(v.name());
        Expr alpha = Renamer(VarMap{}).mutate(e);      // same free vars, fresh binders
        Expr renamed = Renamer(fresh_free).mutate(e);  // fresh free vars too
        EXPECT_TRUE(structural_equal(e, alpha)) << e << "\nvs\n" << alpha;
        EXPECT_TRUE(structural_equal(e, renamed, true)) << e << "\nvs\n" << renamed;
        EXPECT_EQ(structural_hash(e), structural_hash(alpha)) << e;
        EXPECT_EQ(structural_hash(e), structural_hash(renamed)) << e;
        if (!structural_equal(e, renamed)) {
            // Renaming free variables changes identity-based equality whenever one occurs.
            EXPECT_TRUE(structural_equal(e, renamed, true));
        }
        // Changing one free variable into another breaks equality but keeps the shape.
        Expr swapped = Renamer(VarMap{{vars[0].get(), vars[1]}}).mutate(e);
        if (!structural_equal(e, swapped, true)) {
            EXPECT_FALSE(structural_equal(e, swapped));
        }
    }
}
