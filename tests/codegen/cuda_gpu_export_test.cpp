// CUDA codegen on a real GPU, without the runtime: with TESSEL_CUDA_GPU_EXPORT=<dir>, writes for
// each case a self-contained CUDA program <case>.cu (the generated kernels and a host main that
// launches them as the plan says and compares every output with the loop-IR interpreter's) and
// its data <case>.bin. On a GPU host, in <dir>:
//   for f in *.cu; do nvcc -arch=sm_90 -o ${f%.cu}.exe $f && ./${f%.cu}.exe; done
// prints PASS or FAIL per case (also worth running under compute-sanitizer --tool racecheck).
// Without the variable the test is skipped.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

#include "codegen/CudaTestUtil.h"
#include "correctness/ScheduleTestUtil.h"
#include "correctness/SharedGemm.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

// One launch: grid, block, dynamic shared memory and parameters evaluated for `sv`.
std::string launch_code(const CudaLaunch& l, const std::vector<int64_t>& sv) {
    auto ev = [&](const LaunchExpr& e) { return std::to_string(e.eval(sv.data())); };
    std::string s = "    {\n";
    std::string dyn = ev(l.dynamic_shared_bytes);
    s += "      if (" + dyn + " > 0) CK(cudaFuncSetAttribute(" + l.function +
         ", cudaFuncAttributeMaxDynamicSharedMemorySize, " + dyn + "));\n";
    s += "      " + l.function + "<<<dim3(" + ev(l.grid[0]) + "," + ev(l.grid[1]) + "," +
         ev(l.grid[2]) + "), dim3(" + ev(l.block[0]) + "," + ev(l.block[1]) + "," + ev(l.block[2]) +
         "), " + dyn + ">>>(";
    for (size_t i = 0; i < l.params.size(); ++i) {
        if (i) s += ", ";
        const CudaParam& p = l.params[i];
        if (p.kind == CudaParam::Kind::ShapeVar)
            s += std::to_string(sv[p.index]) + "LL";
        else
            s += "AnyPtr{dev[" + std::to_string(p.index) + "]}";
    }
    s += ");\n      CK(cudaGetLastError()); CK(cudaDeviceSynchronize());\n    }\n";
    return s;
}

// Host code comparing output `i` (of type t) with the expected bytes: floats within
// 1e-5 + rtol * |expected| (NaN equals NaN; 16-bit floats decoded first), integers exactly.
std::string compare_code(const std::string& name, size_t i, Type t, double rtol) {
    std::ostringstream cu;
    std::string ct = t.is_float() && t.bits == 32   ? "float"
                     : t.is_float() && t.bits == 64 ? "double"
                     : t.is_float()                 ? "unsigned short"
                     : t.bits == 8                  ? "unsigned char"
                     : t.bits == 16                 ? "unsigned short"
                     : t.bits == 32                 ? "unsigned"
                                                    : "unsigned long long";
    cu << "  { unsigned char* got = (unsigned char*)malloc(nb[" << i
       << "]); CK(cudaMemcpy(got, dev[" << i << "], nb[" << i << "], cudaMemcpyDeviceToHost));\n";
    cu << "    const " << ct << "* g = (const " << ct << "*)got; const " << ct << "* e = (const "
       << ct << "*)expect[" << i << "];\n";
    cu << "    for (unsigned long long k = 0; k < nb[" << i << "] / sizeof(" << ct << "); ++k) {\n";
    if (t.is_float() && t.bits >= 32) {
        cu << "      double a = g[k], b = e[k]; bool ok = (std::isnan(a) && std::isnan(b)) || "
              "a == b || fabs(a - b) <= 1e-5 + "
           << rtol << " * fabs(b);\n";
    } else if (t.is_float()) {
        cu << "      auto cvt = [](unsigned short h) -> double { "
           << (t.is_bfloat()
                   ? "unsigned u = ((unsigned)h) << 16; float x; memcpy(&x, &u, 4); return x;"
                   : "int s = h >> 15, ex = (h >> 10) & 31, m = h & 1023; double v = ex == 0 ? "
                     "ldexp(m, -24) : ex == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, ex - "
                     "25); return s ? -v : v;")
           << " };\n";
        cu << "      double a = cvt(g[k]), b = cvt(e[k]); bool ok = (std::isnan(a) && "
              "std::isnan(b)) || a == b || fabs(a - b) <= 1e-3 + "
           << std::max(rtol, 1e-2) << " * fabs(b);\n";
    } else {
        cu << "      double a = (double)g[k], b = (double)e[k]; bool ok = g[k] == e[k];\n";
    }
    cu << "      if (!ok) { if (bad < 5) printf(\"FAIL " << name << " arg " << i
       << " [%llu] got %g expected %g\\n\", k, a, b); ++bad; }\n    }\n  }\n";
    return cu.str();
}

// Writes <name>.cu and <name>.bin: inputs random (or `inputs_override`), outputs as the loop-IR
// interpreter computes them; shape variables take `shape_values`.
void export_case(const std::string& name, const Schedule& s, std::vector<Tensor> args,
                 std::vector<HostArray> inputs_override = {}, double rtol = 1e-4,
                 std::vector<int64_t> shape_values = {}, bool fast_math = false) {
    const char* dir = std::getenv("TESSEL_CUDA_GPU_EXPORT");
    if (!dir) GTEST_SKIP();
    LoweredFunc f = lower(s, args, cuda_test_target(), "main");
    std::vector<Var> shape_vars;
    KernelSignature sig = internal::make_signature(f, {}, DeviceType::CUDA, "cuda", &shape_vars);
    internal::CudaCode code = internal::codegen_cuda(f, shape_vars, {{}, fast_math});
    // Arrays: inputs random, outputs poisoned.
    std::vector<HostArray> arrays;
    std::vector<int64_t> sv = shape_values;
    for (size_t i = 0; i < args.size(); ++i) {
        std::vector<int64_t> shape;
        for (const Expr& e : f.args[i].shape()) {
            if (auto c = as_const_int(e))
                shape.push_back(*c);
            else
                shape.push_back(sv.at(0));
        }
        if (i < inputs_override.size())
            arrays.push_back(inputs_override[i]);
        else if (!sig.args[i].is_written())
            arrays.push_back(HostArray::random(f.args[i].dtype(), shape, 17 + i));
        else
            arrays.push_back(HostArray(f.args[i].dtype(), shape));
    }
    std::vector<HostArray> initial = arrays;
    std::vector<HostArray*> ptrs;
    for (HostArray& a : arrays) ptrs.push_back(&a);
    run_lowered(f, ptrs);
    // Data file: per arg: nbytes, initial bytes, expected bytes.
    std::ofstream bin(std::string(dir) + "/" + name + ".bin", std::ios::binary);
    for (size_t i = 0; i < args.size(); ++i) {
        uint64_t n = arrays[i].nbytes();
        bin.write(reinterpret_cast<const char*>(&n), 8);
        bin.write(static_cast<const char*>(initial[i].data()), n);
        bin.write(static_cast<const char*>(arrays[i].data()), n);
    }
    std::ofstream cu(std::string(dir) + "/" + name + ".cu");
    cu << "#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <cmath>\n#include "
          "<cuda_runtime.h>\n";
    cu << "#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf(\"FAIL " << name
       << " cuda %s line %d\\n\", cudaGetErrorString(e_), __LINE__); exit(1);} } while (0)\n";
    cu << code.source;
    cu << "struct AnyPtr { void* p; template <class T> operator T*() const { return (T*)p; } };\n";
    cu << "int main() {\n  FILE* f = fopen(\"gpucheck/" << name
       << ".bin\", \"rb\"); if (!f) f = fopen(\"" << name << ".bin\", \"rb\");\n";
    cu << "  const int nargs = " << args.size()
       << ";\n  void* dev[64]; unsigned char* init[64]; unsigned char* expect[64]; unsigned long "
          "long nb[64];\n";
    cu << "  for (int i = 0; i < nargs; ++i) { fread(&nb[i], 8, 1, f); init[i] = (unsigned "
          "char*)malloc(nb[i]); expect[i] = (unsigned char*)malloc(nb[i]);"
          " fread(init[i], 1, nb[i], f); fread(expect[i], 1, nb[i], f); CK(cudaMalloc(&dev[i], "
          "nb[i]));"
          " CK(cudaMemcpy(dev[i], init[i], nb[i], cudaMemcpyHostToDevice)); }\n";
    for (size_t w = 0; w < code.plan.workspaces.size(); ++w)
        cu << "  CK(cudaMalloc(&dev[" << args.size() + w << "], "
           << code.plan.workspaces[w].bytes.eval(sv.data()) << "));\n"
           << "  CK(cudaMemset(dev[" << args.size() + w << "], 0xff, "
           << code.plan.workspaces[w].bytes.eval(sv.data()) << "));\n";
    for (const CudaLaunch& l : code.plan.launches) cu << launch_code(l, sv);
    cu << "  int bad = 0;\n";
    for (size_t i = 0; i < args.size(); ++i)
        if (sig.args[i].is_written()) cu << compare_code(name, i, f.args[i].dtype(), rtol);
    cu << "  if (!bad) printf(\"PASS " << name << "\\n\"); else printf(\"FAIL " << name
       << " %d mismatches\\n\", bad);\n  return bad != 0;\n}\n";
}

void elementwise_case(const std::string& name, Type in, Type out,
                      const std::function<Expr(Expr, Expr, Var)>& fn, int vector = 1,
                      double rtol = 1e-4) {
    Tensor A = placeholder({1000}, in, "A");
    Tensor B = placeholder({1000}, in, "B");
    Tensor C = compute(
        {1000}, [&](Var i) { return cast(out, fn(A(i), B(i), i)); }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    if (vector > 1) s.split(c, 0, vector);
    s.split(c, 0, 32);
    s.bind(c, 0, IterAnnotation::BlockX);
    s.bind(c, 1, IterAnnotation::ThreadX);
    if (vector > 1) s.vectorize(c, 2);
    std::vector<Tensor> args = placeholders_of(s);
    args.push_back(C);
    export_case(name, s, args, {}, rtol);
}

}  // namespace

TEST(CudaGpuExport, Cases) {
    if (!std::getenv("TESSEL_CUDA_GPU_EXPORT")) GTEST_SKIP();
    for (int threads : {128, 16, 24, 64}) {
        Tensor X, Y;
        Schedule s = block_softmax(64, 256 - (threads == 24 ? 16 : 0), threads, &X, &Y);
        export_case("softmax" + std::to_string(threads), s, {X, Y});
    }
    {
        Tensor X, Y;
        Schedule s = block_softmax(64, 256, 128, &X, &Y);
        export_case("softmax128_fast", s, {X, Y}, {}, 1e-3, {}, true);
    }
    for (Type t : {Float(16), BFloat(16)}) {  // exact: rounded after every operation
        elementwise_case("exact_" + t.str(), t, t, [&](Expr a, Expr b, Var) {
            return (a * b + a - b) * make_const(t, 3.0) + min(a, b) / max(b, make_const(t, 0.25)) +
                   cast(t, cast(Float(64), a) * 1.0001);
        });
    }
    {
        SharedGemm g(256, 128, 64, 16);
        export_case("gemm", g.s, {g.A, g.B, g.C}, {}, 1e-4);
    }
    {
        const int n = 6, m = 256;
        Tensor X = placeholder({n, m}, Float(32), "X");
        IterVar k = reduce_axis({0, m}, "k");
        std::vector<Tensor> r = compute_multi(
            {n}, [&](const std::vector<Var>& v) { return argmax(k.var(), X(v[0], k), {k}); },
            "argmax");
        Schedule s = create_schedule(r);
        int st = s.stage_of(r[0]);
        s.bind(st, 0, IterAnnotation::BlockX);
        s.split(st, 1, 64);
        s.bind(st, 2, IterAnnotation::ThreadX);
        HostArray x = HostArray::random(Float(32), {n, m}, 7, 0, 3.999);
        for (int64_t i = 0; i < x.size(); ++i) x.set(i, std::floor(x.get(i)));
        export_case("argmax", s, {X, r[0], r[1]}, {x});
    }
    for (Type t : {Float(32), Float(64), Float(16), BFloat(16)}) {
        elementwise_case(
            "math_" + t.str(), t, t,
            [&](Expr a, Expr b, Var) {
                Expr r = exp(a) + log(b) + sqrt(a) * rsqrt(b) + tanh(a) + sigmoid(b) + erf(a);
                r = r + pow(a, b) + abs(a) + floor(a) + ceil(b) + round(a) + trunc(b);
                r = r + fma(a, b, a) + floordiv(a, b) + floormod(a, b) + min(a, b);
                return select(isnan(a), max(a, b), r) + exp2(a) + log2(b) + sin(a) + cos(b);
            },
            1, t.bits == 16 ? 2e-2 : 1e-4);
    }
    for (Type t : {Int(8), Int(16), Int(32), Int(64), UInt(8), UInt(16), UInt(32), UInt(64)}) {
        elementwise_case("int_" + t.str(), t, Float(32), [&](Expr a, Expr b, Var) {
            Expr r = a * b + a - b + truncdiv(a, b) + truncmod(a, b) + floordiv(a, b) +
                     floormod(a, b) + min(a, b) + max(a, b) + abs(a);
            return select(a < b && !(a == b), cast(Float(32), r), cast(Float(32), a));
        });
    }
    for (Type t : {Int(8), Int(32), Int(64), UInt(8), UInt(32), Bool()}) {
        for (Type f : {Float(32), Float(64), Float(16)}) {
            elementwise_case("cast_" + f.str() + "_" + t.str(), f, t,
                             [&](Expr a, Expr b, Var) { return a * make_const(f, 300.0) + b; });
        }
    }
    for (Type t : {Float(32), Float(16), Int(8), Int(32), BFloat(16)})
        elementwise_case(
            "vec4_" + t.str(), t, t, [&](Expr a, Expr b, Var) { return a + b; }, 4);
    elementwise_case(
        "vec2", Float(32), Float(32), [&](Expr a, Expr b, Var) { return a * b; }, 2);
    {
        Tensor X = placeholder({8, 64, 16}, Float(32), "X");
        IterVar k = reduce_axis({0, 16}, "k"), l = reduce_axis({0, 64}, "l");
        Tensor R = compute(
            {8},
            [&](Var i) {
                return sum(X(i, l, k), {l, k});
            },
            "R");
        Schedule s = create_schedule({R});
        int r = s.stage_of(R);
        s.bind(r, 0, IterAnnotation::BlockX);
        s.split(r, 1, 8);
        s.bind(r, 2, IterAnnotation::ThreadY);
        s.bind(r, 3, IterAnnotation::ThreadX);
        export_case("reduce2d", s, {X, R});
    }
    {
        Tensor A = placeholder({4096}, Float(32), "A");
        Tensor T = compute(
            {4096}, [&](Var i) { return A(i) * 3.0f; }, "T");
        Tensor C = compute(
            {4096}, [&](Var i) { return T(4095 - i) + 1.0f; }, "C");
        Schedule s = create_schedule({C});
        for (Tensor t : {T, C}) {
            int st = s.stage_of(t);
            s.split(st, 0, 256);
            s.bind(st, 0, IterAnnotation::BlockX);
            s.bind(st, 1, IterAnnotation::ThreadX);
        }
        export_case("two_kernels", s, {A, C});
    }
    {
        Var n("n");
        Tensor A = placeholder({n}, Float(32), "A");
        Tensor C = compute(
            {n}, [&](Var i) { return A(i) + 1.0f; }, "C");
        Schedule s = create_schedule({C});
        int c = s.stage_of(C);
        s.split(c, 0, 128);
        s.bind(c, 0, IterAnnotation::BlockX);
        s.bind(c, 1, IterAnnotation::ThreadX);
        export_case("symbolic", s, {A, C}, {}, 1e-4, {1000});
    }
    {
        Tensor A = placeholder({64, 256}, Float(32), "A");
        Tensor As = compute(
            {64, 256}, [&](Var i, Var k) { return A(i, k); }, "As");
        Tensor Bs = compute(
            {64, 256}, [&](Var i, Var k) { return A(i, k) * 2.0f; }, "Bs");
        Tensor C = compute(
            {64, 256}, [&](Var i, Var k) { return As(i, k) + Bs(i, 255 - k); }, "C");
        Schedule s = create_schedule({C});
        int c = s.stage_of(C);
        s.split(c, 0, 32);
        s.bind(c, 0, IterAnnotation::BlockX);
        s.bind(c, 1, IterAnnotation::ThreadY);
        s.split(c, 2, 32);
        s.bind(c, 3, IterAnnotation::ThreadX);
        for (Tensor t : {As, Bs}) {
            int st = s.stage_of(t);
            s.set_scope(st, StorageScope::Shared);
            s.compute_at(st, c, 0);
            s.split(st, 1, 32);
            s.bind(st, 0, IterAnnotation::ThreadY);
            s.bind(st, 2, IterAnnotation::ThreadX);
        }
        export_case("dynamic_shared", s, {A, C});
    }
}
