// Run-time checks inside generated code: a failed AssertStmt (as bounds-check mode inserts) is a
// RuntimeError carrying its message, also from inside a parallel loop; float16 arithmetic;
// symbolic extents; vectorized exp through libmvec.
#include <gtest/gtest.h>

#include "codegen/CodegenTestUtil.h"
#include "tessel/ir/IROperator.h"

using namespace tessel;

namespace {

// out[i] = in[i] for i < 8, after asserting in[i] < 100; the loop is `kind`.
LoweredFunc checked_copy(ForKind kind) {
    Buffer in("in", Float(32), {8}), out("out", Float(32), {8});
    Var i("i");
    Expr value = Load::make(Float(32), in->data, i);
    Stmt body = Seq::make({AssertStmt::make(value < 100.0f, "in[i] must be below 100"),
                           Store::make(out->data, value, i)});
    return LoweredFunc{"checked_copy", {in, out}, For::make(i, 0, 8, kind, body)};
}

}  // namespace

TEST(JitRuntimeChecks, FailedAssertIsARuntimeErrorWithItsMessage) {
    for (ForKind kind : {ForKind::Serial, ForKind::Parallel}) {
        SCOPED_TRACE(for_kind_name(kind));
        Module m = build(checked_copy(kind));
        NDArray in = NDArray::empty({8}, float32()), out = NDArray::empty({8}, float32());
        for (int i = 0; i < 8; ++i) in.data_as<float>()[i] = float(i);
        m.get("checked_copy")({in, out});
        EXPECT_EQ(out.data_as<float>()[7], 7.0f);
        in.data_as<float>()[5] = 1000.0f;
        try {
            m.get("checked_copy")({in, out});
            ADD_FAILURE() << "no error";
        } catch (const RuntimeError& e) {
            EXPECT_NE(std::string(e.what()).find("in[i] must be below 100"), std::string::npos)
                << e.what();
        }
    }
}

TEST(JitRuntimeChecks, Float16Elementwise) {
    Tensor A = placeholder({40}, Float(16), "A");
    Tensor B = placeholder({40}, Float(16), "B");
    Tensor C = compute(
        {40}, [&](Var i) { return A(i) * B(i) + A(i); }, "C");
    Schedule s = create_schedule({C});
    s.split(s.stage_of(C), 0, 8);
    s.vectorize(s.stage_of(C), 1);
    tessel::testing::expect_jit_matches_reference(s);
}

TEST(JitRuntimeChecks, SymbolicExtentsComeFromTheArguments) {
    Var n("n");
    Tensor A = placeholder({n}, Float(32), "A");
    Tensor C = compute(
        {n}, [&](Var i) { return A(i) * 2.0f + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    s.split(s.stage_of(C), 0, 8);
    s.parallel(s.stage_of(C), 0);
    Module m = build(s, {A, C});
    ASSERT_EQ(m.signatures()[0].shape_vars(), std::vector<std::string>{"n"});
    for (int64_t size : {1, 8, 37}) {
        NDArray a = NDArray::empty({size}, float32()), c = NDArray::empty({size}, float32());
        for (int64_t i = 0; i < size; ++i) a.data_as<float>()[i] = float(i);
        m.get("main")({a, c});
        for (int64_t i = 0; i < size; ++i) EXPECT_EQ(c.data_as<float>()[i], 2.0f * i + 1.0f);
    }
    NDArray a = NDArray::empty({5}, float32()), c = NDArray::empty({6}, float32());
    EXPECT_THROW(m.get("main")({a, c}), RuntimeError);  // inconsistent n
}

TEST(JitRuntimeChecks, VectorizedExpCallsNoScalarLibm) {
    Tensor A = placeholder({64}, Float(32), "A");
    Tensor C = compute(
        {64}, [&](Var i) { return exp(A(i)); }, "C");
    Schedule s = create_schedule({C});
    s.split(s.stage_of(C), 0, 8);
    s.vectorize(s.stage_of(C), 1);
    std::string target = "llvm -mcpu=x86-64 -mattr=+avx2,+fma";
    Module m = build(s, {A, C}, target);
    const std::string& assembly = m.get_source("asm");
    auto count = [&](const std::string& what) {
        size_t n = 0;
        for (size_t at = assembly.find(what); at != std::string::npos;
             at = assembly.find(what, at + 1))
            ++n;
        return n;
    };
    EXPECT_EQ(count("expf"), count("_ZGVdN8v_expf")) << "a scalar expf call:\n" << assembly;
    EXPECT_NE(assembly.find("_ZGVdN8v_expf"), std::string::npos) << assembly;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))  // runnable here
        tessel::testing::expect_jit_matches_reference(s, 1, target);
}
