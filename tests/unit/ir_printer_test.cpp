// The IR printer: exact text of representative programs, precedence, constants, unique names.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "ir_test_util.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"

using namespace tessel;
using namespace tessel::test;

TEST(IRPrinter, MatmulLoopNest) {
    Buffer A("A", Float(32), {128, 64}), B("B", Float(32), {64, 128}),
        C("C", Float(32), {128, 128});
    Var i("i"), j("j"), k("k");
    Expr update =
        BufferLoad::make(C, {i, j}) + BufferLoad::make(A, {i, k}) * BufferLoad::make(B, {k, j});
    Stmt body = BufferStore::make(C, update, {i, j});
    Stmt nest = For::make(
        i, 0, 128, ForKind::Parallel,
        For::make(j, 0, 128, ForKind::Serial, For::make(k, 0, 64, ForKind::Unrolled, body)));
    EXPECT_EQ(to_string(nest),
              "for i in parallel(0, 128):\n"
              "    for j in range(0, 128):\n"
              "        for k in unrolled(0, 64):\n"
              "            C[i, j] = C[i, j] + A[i, k] * B[k, j]\n");
}

TEST(IRPrinter, GpuKernelWithAllocateIfLetAndRamp) {
    Var bx("bx"), tx("tx"), v("v"), x("x", Float(32));
    Var in("in", Handle()), out("out", Handle()), sh("sh", Handle());
    Expr idx = Ramp::make(tx * 4, 1, 4);
    Stmt copy =
        Store::make(sh, Load::make(Float(32, 4), in, Ramp::make(bx * 128 + tx * 4, 1, 4)), idx);
    Expr val = Load::make(Float(32), sh, tx);
    Stmt guarded = IfThenElse::make(tx < 16, Store::make(out, exp(val) * 2.0f, bx * 32 + tx),
                                    Store::make(out, Let::make(x, val, x * x), bx * 32 + tx));
    Stmt kernel = For::make(
        bx, 0, 8, ForKind::ThreadBound,
        For::make(tx, 0, 32, ForKind::ThreadBound,
                  Allocate::make(
                      sh, Float(32), {128}, StorageScope::Shared,
                      Seq::make({copy, Evaluate::make(Call::make(Intrinsic::thread_barrier, {})),
                                 LetStmt::make(v, tx % 4, guarded)})),
                  "threadIdx.x"),
        "blockIdx.x");
    EXPECT_EQ(to_string(kernel),
              "for bx in thread_binding(0, 8, \"blockIdx.x\"):\n"
              "    for tx in thread_binding(0, 32, \"threadIdx.x\"):\n"
              "        allocate sh: float32[128] (shared)\n"
              "        sh[ramp(tx * 4, 1, 4)] = in[ramp(bx * 128 + tx * 4, 1, 4)]\n"
              "        thread_barrier()\n"
              "        let v = tx % 4\n"
              "        if tx < 16:\n"
              "            out[bx * 32 + tx] = exp(sh[tx]) * 2.0f\n"
              "        else:\n"
              "            out[bx * 32 + tx] = let x = sh[tx] in x * x\n");
}

TEST(IRPrinter, VectorizedLoopAndPredicatedAccess) {
    Var i("i"), a("a", Handle());
    Expr pred = Ramp::make(i * 4, 1, 4) < Broadcast::make(Expr(10), 4);
    Stmt s = For::make(i, 0, 3, ForKind::Vectorized,
                       Store::make(a, Load::make(Float(32, 4), a, Ramp::make(i * 4, 1, 4), pred),
                                   Ramp::make(i * 4, 1, 4), pred));
    EXPECT_EQ(to_string(s),
              "for i in vectorized(0, 3):\n"
              "    a[ramp(i * 4, 1, 4), pred=ramp(i * 4, 1, 4) < broadcast(10, 4)] = "
              "a[ramp(i * 4, 1, 4), pred=ramp(i * 4, 1, 4) < broadcast(10, 4)]\n");
}

TEST(IRPrinter, LoopBoundsAreMinAndEnd) {
    Var i("i"), n("n"), m("m"), a("a", Handle());
    Stmt body = Store::make(a, 0.0f, i);
    EXPECT_EQ(to_string(For::make(i, 4, 8, ForKind::Serial, body)),
              "for i in range(4, 12):\n    a[i] = 0.0f\n");
    EXPECT_EQ(to_string(For::make(i, 0, n, ForKind::Serial, body)),
              "for i in range(0, n):\n    a[i] = 0.0f\n");
    EXPECT_EQ(to_string(For::make(i, m, n, ForKind::Serial, body)),
              "for i in range(m, m + n):\n    a[i] = 0.0f\n");
    Var l("l", Int(64));
    EXPECT_EQ(to_string(For::make(l, Expr(int64_t(0)), Expr(int64_t(5)), ForKind::Serial, body)),
              "for l in range(int64(0), int64(5)):\n    a[i] = 0.0f\n");
}

TEST(IRPrinter, ElifAttrAssertAndScopes) {
    Var i("i"), a("a", Handle()), t("t", Handle());
    Stmt s1 = Store::make(a, 1, i), s2 = Store::make(a, 2, i), s3 = Store::make(a, 3, i);
    Stmt chain = IfThenElse::make(i == 0, s1, IfThenElse::make(i == 1, s2, s3));
    EXPECT_EQ(to_string(chain),
              "if i == 0:\n    a[i] = 1\nelif i == 1:\n    a[i] = 2\nelse:\n    a[i] = 3\n");
    Stmt attr = AttrStmt::make("pragma_unroll", 4, AssertStmt::make(i >= 0, "say \"hi\"\n"));
    EXPECT_EQ(to_string(attr),
              "attr pragma_unroll = 4:\n    assert(i >= 0, \"say \\\"hi\\\"\\n\")\n");
    // A scoped statement followed by statements outside its scope is closed explicitly.
    Stmt alloc = Allocate::make(t, Int(32), {4, 2}, StorageScope::Local, s1);
    EXPECT_EQ(to_string(Seq::make({alloc, s2})),
              "allocate t: int32[4, 2] (local)\na[i] = 1\n# end allocate t\na[i] = 2\n");
    Var v("v");
    EXPECT_EQ(to_string(Seq::make({LetStmt::make(v, i + 1, Store::make(a, v, i)), s2})),
              "let v = i + 1\na[i] = v\n# end let v\na[i] = 2\n");
    EXPECT_EQ(to_string(AttrStmt::make("storage_alignment", Expr(), s1)),
              "attr storage_alignment:\n    a[i] = 1\n");
}

TEST(IRPrinter, PrecedenceUsesMinimalParentheses) {
    Var a("a"), b("b"), c("c");
    EXPECT_EQ(to_string(a + b * c), "a + b * c");
    EXPECT_EQ(to_string((a + b) * c), "(a + b) * c");
    EXPECT_EQ(to_string(a - b - c), "a - b - c");
    EXPECT_EQ(to_string(a - (b - c)), "a - (b - c)");
    EXPECT_EQ(to_string(a / b), "a // b");
    EXPECT_EQ(to_string(a % (b * c)), "a % (b * c)");
    EXPECT_EQ(to_string(a * b % c), "a * b % c");
    EXPECT_EQ(to_string(truncdiv(a, b) + truncmod(a, b)), "truncdiv(a, b) + truncmod(a, b)");
    EXPECT_EQ(to_string(a + -1), "a + -1");
    EXPECT_EQ(to_string(min(a, b) < max(b, c) + 1), "min(a, b) < max(b, c) + 1");
    EXPECT_EQ(to_string(a < b && (b < c || !(a == c))), "a < b and (b < c or not a == c)");
    EXPECT_EQ(to_string((a < b) == (b < c)), "(a < b) == (b < c)");
    EXPECT_EQ(to_string(!(a < b && b < c)), "not (a < b and b < c)");
    EXPECT_EQ(to_string(select(a < b, a, b)), "select(a < b, a, b)");
    EXPECT_EQ(to_string(Let::make(c, a + 1, c * c) + 1), "(let c = a + 1 in c * c) + 1");
    Var x("x", Float(32)), y("y", Float(32));
    EXPECT_EQ(to_string(x / y), "x / y");
    EXPECT_EQ(to_string(truncmod(x, y)), "fmod(x, y)");
    EXPECT_EQ(to_string(floordiv(x, y)), "x // y");
    EXPECT_EQ(to_string(x * -1.5f), "x * -1.5f");
    EXPECT_EQ(to_string(cast(Int(32), x) + a), "int32(x) + a");
    EXPECT_EQ(to_string(if_then_else(a < 3, x, y)), "if_then_else(a < 3, x, y)");
    EXPECT_EQ(to_string(fma(x, y, x)), "fma(x, y, x)");
}

TEST(IRPrinter, Constants) {
    EXPECT_EQ(to_string(Expr(7)), "7");
    EXPECT_EQ(to_string(Expr(-7)), "-7");
    EXPECT_EQ(to_string(Expr(int64_t(5))), "int64(5)");
    EXPECT_EQ(to_string(make_const(Int(8), -3)), "int8(-3)");
    EXPECT_EQ(to_string(make_const(UInt(16), 65535)), "uint16(65535)");
    EXPECT_EQ(to_string(UIntImm::make(UInt(64), std::numeric_limits<uint64_t>::max())),
              "uint64(18446744073709551615)");
    EXPECT_EQ(to_string(const_true()), "True");
    EXPECT_EQ(to_string(const_false()), "False");
    EXPECT_EQ(to_string(Expr(1.5f)), "1.5f");
    EXPECT_EQ(to_string(Expr(1.0f)), "1.0f");
    EXPECT_EQ(to_string(Expr(0.1f)), "0.1f");
    EXPECT_EQ(to_string(Expr(0.1)), "0.1");
    EXPECT_EQ(to_string(Expr(2.0)), "2.0");
    EXPECT_EQ(to_string(Expr(1e20f)), "1e+20f");
    EXPECT_EQ(to_string(make_const(Float(16), 0.1)), "float16(0.099975586)");
    EXPECT_EQ(to_string(make_const(BFloat(16), 1.5)), "bfloat16(1.5)");
    EXPECT_EQ(to_string(inf_value(Float(32))), "float32(inf)");
    EXPECT_EQ(to_string(make_const(Float(64), -std::numeric_limits<double>::infinity())),
              "float64(-inf)");
    EXPECT_EQ(to_string(make_const(Float(32), std::nan(""))), "float32(nan)");
    EXPECT_EQ(to_string(make_const(Float(32, 4), 2.5)), "broadcast(2.5f, 4)");
    EXPECT_EQ(to_string(const_true(8)), "broadcast(True, 8)");
    EXPECT_EQ(to_string(Expr()), "<undefined>");
}

TEST(IRPrinter, FloatsRoundTrip) {
    for (double v : {1.0 / 3.0, 3.141592653589793, 1e-300, 123456789.125, -2.5e-7}) {
        double back = std::stod(to_string(Expr(v)));
        EXPECT_EQ(back, v) << to_string(Expr(v));
        std::string s = to_string(Expr(static_cast<float>(v)));
        ASSERT_EQ(s.back(), 'f');
        EXPECT_EQ(std::stof(s.substr(0, s.size() - 1)), static_cast<float>(v)) << s;
    }
}

TEST(IRPrinter, Reduce) {
    Tensor A = make_tensor("A", {128, 64});
    Var i("i");
    IterVar k = make_reduce_axis("k", 0, 64);
    Expr r = Reduce::make(sum_reducer(), {TensorRead::make(A, {i, k.var()})}, {k}, Expr(), 0);
    EXPECT_EQ(to_string(r), "sum(A[i, k], axis=[k in range(0, 64)])");
    IterVar k2 = make_reduce_axis("k", 2, 8);
    Expr rw = Reduce::make(sum_reducer(Float(32), "my_sum"),
                           {TensorRead::make(A, {i, k.var() + k2.var()})}, {k, k2}, k.var() < i, 0);
    EXPECT_EQ(to_string(rw),
              "my_sum(A[i, k + k_1], axis=[k in range(0, 64), k_1 in range(2, 10)], where=k < i)");
    // A two-value reducer (argmax-like): every source is listed, and which value is taken.
    Var li("li"), lv("lv", Float(32)), ri("ri"), rv("rv", Float(32));
    CommReducer argmax("argmax", {li, lv}, {ri, rv},
                       {select(lv >= rv, li, ri), select(lv >= rv, lv, rv)},
                       {Expr(-1), min_value(Float(32))});
    Expr am = Reduce::make(argmax, {k.var(), TensorRead::make(A, {i, k.var()})}, {k}, Expr(), 1);
    EXPECT_EQ(to_string(am), "argmax(k, A[i, k], axis=[k in range(0, 64)], value_index=1)");
}

TEST(IRPrinter, DistinctVariablesWithOneNameGetUniqueNames) {
    Var i1("i"), i2("i"), i3("i"), taken("i_1"), a("a", Handle());
    Stmt s = For::make(i1, 0, 4, ForKind::Serial,
                       For::make(i2, 0, 4, ForKind::Serial, Store::make(a, i1 + i2, i1 * 4 + i2)));
    EXPECT_EQ(to_string(s),
              "for i in range(0, 4):\n"
              "    for i_1 in range(0, 4):\n"
              "        a[i * 4 + i_1] = i + i_1\n");
    // A variable already called i_1 keeps its name when it comes first; the clash moves on.
    EXPECT_EQ(to_string(taken + i1 + i2 + i1), "i_1 + i + i_2 + i");
    // The same variable twice is one name; an expression printed on its own starts afresh.
    EXPECT_EQ(to_string(i3 + i3), "i + i");
    Var empty("");
    EXPECT_EQ(to_string(empty + empty), "v + v");
}

TEST(IRPrinter, BuffersAndTensorsWithOneNameGetUniqueNames) {
    Buffer b1("B", Float(32), {4}), b2("B", Float(32), {4});
    Var i("i");
    Stmt s = BufferStore::make(b1, BufferLoad::make(b2, {i}) + BufferLoad::make(b1, {i}), {i});
    EXPECT_EQ(to_string(s), "B[i] = B_1[i] + B[i]\n");
    Tensor t1 = make_tensor("T", {4}), t2 = make_tensor("T", {4});
    EXPECT_EQ(to_string(TensorRead::make(t1, {i}) * TensorRead::make(t2, {i})), "T[i] * T_1[i]");
    // Variables, buffers and tensors have separate namespaces.
    Var tv("T", Float(32));
    EXPECT_EQ(to_string(TensorRead::make(t1, {i}) * tv), "T[i] * T");
}

TEST(IRPrinter, PrinterKeepsNamesAcrossCalls) {
    Var i1("i"), i2("i");
    std::ostringstream os;
    IRPrinter p(os);
    p.print(i1 + 1);
    os << "; ";
    p.print(i2 + i1);
    os << "; ";
    p.print(Store::make(Var("a", Handle()), i2, i1), 1);
    EXPECT_EQ(os.str(), "i + 1; i_1 + i;     a[i] = i_1\n");
}

TEST(IRPrinter, StreamOperators) {
    Tensor t = make_tensor("Data", {2, 3});
    Buffer b("buf", Float(16), {Var("n"), 8}, StorageScope::Shared);
    std::ostringstream os;
    os << t << " " << t.op() << " " << b << " " << Buffer("g", Int(8), {2});
    EXPECT_EQ(os.str(), "Data Data buf: float16[n, 8] (shared) g: int8[2]");
}
