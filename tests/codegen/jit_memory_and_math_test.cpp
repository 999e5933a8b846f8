// What the LLVM backend assumes of memory, and vector math: alias scopes only for buffers proven
// disjoint (in-place arguments get none), alignment proven for tessel's own allocations,
// workspace blocks freed on every failure path, vector math through libmvec at every lane count
// and ISA, opt-in fast-math.
#include <gtest/gtest.h>

#include <functional>

#include "codegen/CodegenTestUtil.h"
#include "tessel/ir/IROperator.h"
#include "tessel/runtime/Workspace.h"

using namespace tessel;
using tessel::testing::expect_jit_matches_reference;

namespace {

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// C = f(A) over `n` elements, vectorized by `lanes`.
Schedule vector_map(int64_t n, int lanes, const std::function<Expr(Expr)>& f) {
    Tensor A = placeholder({n}, Float(32), "A");
    Tensor C = compute(
        {n}, [&](Var i) { return f(A(i)); }, "C");
    Schedule s = create_schedule({C});
    s.split(s.stage_of(C), 0, lanes);
    s.vectorize(s.stage_of(C), 1);
    return s;
}

// Builds `s` with its placeholders and outputs as the arguments.
Module build_all(const Schedule& s, const std::string& target, const BuildOptions& options = {}) {
    std::vector<Tensor> args = tessel::testing::placeholders_of(s);
    for (const Tensor& t : s.outputs()) args.push_back(t);
    return build(s, args, target, "main", options);
}

struct MathCase {
    const char* name;  // libm's float name
    std::function<Expr(Expr)> f;
};

std::vector<MathCase> math_cases() {
    return {{"expf", [](Expr x) { return exp(x); }},
            {"logf", [](Expr x) { return log(abs(x) + 0.5f); }},
            {"tanhf", [](Expr x) { return tanh(x * 3.0f); }},
            {"erff", [](Expr x) { return erf(x * 2.0f); }},
            {"expf", [](Expr x) { return sigmoid(x * 4.0f); }},
            {"powf", [](Expr x) { return pow(abs(x) + 0.5f, x); }}};
}

}  // namespace

// A vectorized exp (tanh, erf, ...) is vector calls for every ISA and lane count, never scalar
// libm calls per lane.
TEST(JitVectorMath, NoScalarLibmCallsAtAnyWidth) {
    const std::vector<std::pair<std::string, std::string>> targets = {
        {"llvm -mcpu=x86-64", "_ZGVb"},
        {"llvm -mcpu=x86-64 -mattr=+avx2,+fma", "_ZGVd"},
        {"llvm -mcpu=x86-64 -mattr=+avx2,+fma,+avx512f", "_ZGVe"},
    };
    for (const auto& [target, prefix] : targets) {
        for (int lanes : {4, 8, 16, 5}) {
            for (const MathCase& c : math_cases()) {
                SCOPED_TRACE(target + ", " + std::to_string(lanes) + " lanes, " + c.name);
                Module m = build_all(vector_map(64, lanes, c.f), target);
                const std::string& assembly = m.get_source("asm");
                std::string vector_name = std::string("_") + c.name;  // "..N8v_expf"
                EXPECT_EQ(count(assembly, c.name), count(assembly, vector_name))
                    << "a scalar " << c.name << " call:\n"
                    << assembly;
                EXPECT_NE(assembly.find(prefix), std::string::npos) << assembly;
            }
        }
    }
}

// The same kernels on the host compute what the reference interpreter does.
TEST(JitVectorMath, MatchesTheReferenceOnTheHost) {
    for (int lanes : {4, 8, 16, 5}) {
        for (const MathCase& c : math_cases()) {
            SCOPED_TRACE(std::to_string(lanes) + " lanes, " + c.name);
            expect_jit_matches_reference(vector_map(77, lanes, c.f));
        }
    }
}

// Float modes: contraction of a * b + c into an fma by default, none with -strict-float, every
// fast-math flag only with -fast-math.
TEST(JitFloatModes, ContractByDefaultStrictAndFastOptIn) {
    Schedule s = vector_map(64, 8, [](Expr x) { return x * 2.0f + 1.0f; });
    const std::string target = "llvm -mcpu=x86-64 -mattr=+avx2,+fma";
    Module plain = build_all(s, target);
    std::string strict = build_all(s, target + " -strict-float").get_source("ll");
    std::string fast = build_all(s, target + " -fast-math").get_source("ll");
    EXPECT_NE(plain.get_source("ll").find("fmul contract"), std::string::npos);
    EXPECT_EQ(plain.get_source("ll").find("fast"), std::string::npos);
    EXPECT_NE(plain.get_source("asm").find("vfmadd"), std::string::npos) << plain.get_source("asm");
    EXPECT_EQ(strict.find("contract"), std::string::npos) << strict;
    EXPECT_NE(fast.find("fmul fast"), std::string::npos) << fast;
    for (const char* options : {"", " -strict-float", " -fast-math"})
        expect_jit_matches_reference(s, 1, std::string("llvm") + options);
}

// Distinct arguments get alias scopes; arguments declared in-place get none and may be passed
// the same array.
TEST(JitAliasing, ScopesOnlyForDisjointBuffers) {
    Tensor A = placeholder({64}, Float(32), "A");
    Tensor B = compute(
        {64}, [&](Var i) { return max(A(i), 0.0f); }, "B");
    Schedule s = create_schedule({B});
    s.split(s.stage_of(B), 0, 8);
    s.vectorize(s.stage_of(B), 1);
    Module disjoint = build(s, {A, B});
    EXPECT_NE(disjoint.get_source("ll").find("!alias.scope"), std::string::npos);
    EXPECT_NE(disjoint.get_source("ll").find("!noalias"), std::string::npos);

    BuildOptions options;
    options.in_place = {"A", "B"};
    Module in_place = build(s, {A, B}, "llvm", "main", options);
    EXPECT_EQ(in_place.get_source("ll").find("!alias.scope"), std::string::npos);
    EXPECT_TRUE(in_place.signatures()[0].args[0].in_place);

    NDArray a = NDArray::empty({64}, float32());
    for (int i = 0; i < 64; ++i) a.data_as<float>()[i] = float(i % 7) - 3.0f;
    EXPECT_THROW(disjoint.get("main")({a, a}), RuntimeError);  // overlap: nothing written
    EXPECT_EQ(a.data_as<float>()[0], -3.0f);
    in_place.get("main")({a, a});
    for (int i = 0; i < 64; ++i)
        EXPECT_EQ(a.data_as<float>()[i], std::max(float(i % 7) - 3.0f, 0.0f));
}

TEST(JitAliasing, UnknownInPlaceArgumentIsACompileError) {
    Schedule s = vector_map(64, 8, [](Expr x) { return x + 1.0f; });
    BuildOptions options;
    options.in_place = {"D"};
    try {
        build_all(s, "llvm", options);
        ADD_FAILURE() << "no error";
    } catch (const CompileError& e) {
        EXPECT_NE(std::string(e.what()).find("'D'"), std::string::npos) << e.what();
    }
}

// A heap workspace (32 KiB, over the stack limit) is 64-byte aligned, and vector accesses at
// multiples of 8 floats into it are 32-byte aligned; arguments stay at their element size.
TEST(JitAlignment, OwnAllocationsGetProvenAlignment) {
    Tensor A = placeholder({8192}, Float(32), "A");
    Tensor B = compute(
        {8192}, [&](Var i) { return A(i) * 2.0f; }, "B");
    Tensor C = compute(
        {8192}, [&](Var i) { return B(i) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    for (const Tensor& t : {B, C}) {
        s.split(s.stage_of(t), 0, 8);
        s.vectorize(s.stage_of(t), 1);
    }
    std::string ll = expect_jit_matches_reference(s);
    EXPECT_NE(ll.find("tessel_workspace_alloc"), std::string::npos) << ll;
    EXPECT_NE(ll.find("<8 x float> %"), std::string::npos) << ll;
    EXPECT_GE(count(ll, ", align 32"), 2u) << ll;  // the store into B and the load from it
}

namespace {

// A workspace of `n` floats whose body asserts in[i] < 100 while copying `in` through it; the
// loop over i is `kind`, with a second workspace inside its body.
LoweredFunc checked_copy_through_workspace(ForKind kind, int64_t n) {
    Buffer in("in", Float(32), {n}), out("out", Float(32), {n});
    Var i("i"), scratch("scratch", Handle()), inner("inner", Handle());
    Expr value = Load::make(Float(32), in->data, i);
    Stmt body =
        Seq::make({AssertStmt::make(value < 100.0f, "in[i] must be below 100"),
                   Store::make(inner, value, IntImm::make(Int(32), 0)),
                   Store::make(scratch, Load::make(Float(32), inner, IntImm::make(Int(32), 0)), i),
                   Store::make(out->data, Load::make(Float(32), scratch, i), i)});
    body =
        Allocate::make(inner, Float(32), {IntImm::make(Int(32), 8192)}, StorageScope::Global, body);
    Stmt loop = For::make(i, 0, static_cast<int32_t>(n), kind, body);
    Stmt all =
        Allocate::make(scratch, Float(32), {IntImm::make(Int(32), n)}, StorageScope::Global, loop);
    return LoweredFunc{"checked_copy", {in, out}, all};
}

}  // namespace

TEST(JitWorkspace, FreedWhenAnAssertFails) {
    for (ForKind kind : {ForKind::Serial, ForKind::Parallel}) {
        SCOPED_TRACE(for_kind_name(kind));
        const int64_t n = 8192;
        Module m = build(checked_copy_through_workspace(kind, n));
        EXPECT_NE(m.get_source("ll").find("tessel_workspace_free"), std::string::npos);
        NDArray in = NDArray::empty({n}, float32()), out = NDArray::empty({n}, float32());
        for (int64_t i = 0; i < n; ++i) in.data_as<float>()[i] = float(i % 50);
        int64_t before = workspace_live_blocks();
        m.get("checked_copy")({in, out});
        EXPECT_EQ(out.data_as<float>()[n - 1], float((n - 1) % 50));
        EXPECT_EQ(workspace_live_blocks(), before);
        in.data_as<float>()[n / 2] = 1000.0f;
        EXPECT_THROW(m.get("checked_copy")({in, out}), RuntimeError);
        EXPECT_EQ(workspace_live_blocks(), before) << "a workspace leaked on the failure path";
    }
}
