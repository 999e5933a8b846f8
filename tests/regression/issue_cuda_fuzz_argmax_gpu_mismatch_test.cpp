// Regression test from the GPU schedule fuzzer on the H100 (tests/cuda_fuzz, seed 20241123, 300
// cases): an rfactor'd argmax whose final stage reduces in global memory gave the outputs' initial
// contents back on the GPU while the SPMD interpreter matched the reference:
//   argmax: GPU output 'argmax.v0': 6 of 7 elements differ; worst at [1]: actual 1.51587081e+09
//   expected 11
// The CUDA C was right; NVRTC miscompiled it. The combiner `c ? rf[k, i] : argmax[i]` became one
// load through a selected pointer, emitted as ld.global.nc (the read-only path) because `rf` was a
// `const __restrict__` argument, so it read argmax[i] as it was before the kernel's own stores.
// In a kernel that loads a global buffer it also stores to, the printer now leaves __restrict__
// off the arguments the kernel only reads (CodeGenCUDA::signature).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/cuda/NVRTC.h"
#include "fuzz/support/FuzzCase.h"
#include "gpu/GpuFuzz.h"
#include "tessel/driver/Build.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/schedule/Step.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

const char* const kSteps = R"json([
  {"factor":2,"iter":0,"kind":"split","nparts":false,"stage":1,"tail":"guard"},
  {"factor":4,"iter":2,"kind":"split","nparts":false,"stage":1,"tail":"guard"},
  {"kind":"reorder","order":[0,2,1,3],"stage":1},
  {"factor_axis":0,"iter":1,"kind":"rfactor","stage":1},
  {"annotation":"unroll","iter":1,"kind":"annotate","stage":2},
  {"key":"auto_unroll_max_step","kind":"pragma","stage":2,"value":0},
  {"annotation":"threadIdx.y","iter":2,"kind":"annotate","stage":1},
  {"iters":[0,1],"kind":"fuse","stage":1},
  {"factor":32,"iter":0,"kind":"split","nparts":false,"stage":1,"tail":"guard"},
  {"annotation":"blockIdx.x","iter":0,"kind":"annotate","stage":1},
  {"annotation":"threadIdx.x","iter":1,"kind":"annotate","stage":1},
  {"factor":32,"iter":0,"kind":"split","nparts":false,"stage":2,"tail":"guard"},
  {"annotation":"blockIdx.x","iter":0,"kind":"annotate","stage":2},
  {"annotation":"threadIdx.x","iter":1,"kind":"annotate","stage":2}
])json";

// The PTX of one __global__ function: from its .entry to the next one.
std::string entry_ptx(const std::string& ptx, const std::string& name) {
    size_t begin = ptx.find(".entry " + name + "(");
    if (begin == std::string::npos) return "";
    size_t end = ptx.find(".entry ", begin + 1);
    return ptx.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// The ld.global.nc instructions whose address may be one of several pointers: a register set by
// selp.b64 or assigned more than once (a phi), or computed from one. The miscompile's loads are
// of this kind; a read-only load through one argument's pointer is not.
std::vector<std::string> merged_pointer_nc_loads(const std::string& ptx) {
    static const std::regex def(R"(^\s*(\w+)(?:\.\w+)*\s+(%rd\d+),\s*(.*);)");
    static const std::regex reg(R"(%rd\d+)");
    static const std::regex nc(R"(ld\.global\.nc\S*\s+\S+,\s*\[(%rd\d+))");
    std::map<std::string, int> defs;
    std::set<std::string> merged;
    std::istringstream in(ptx);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    for (int pass = 0; pass < 2; ++pass) {  // twice: a phi's second assignment may come later
        for (const std::string& l : lines) {
            std::smatch m;
            if (!std::regex_search(l, m, def) || m[1] == "ld") continue;
            std::string dst = m[2], srcs = m[3];
            if (pass == 0 && ++defs[dst] > 1) merged.insert(dst);
            if (m[1] == "selp") merged.insert(dst);
            for (std::sregex_iterator it(srcs.begin(), srcs.end(), reg), e; it != e; ++it)
                if (merged.count(it->str())) merged.insert(dst);
        }
    }
    std::vector<std::string> bad;
    for (const std::string& l : lines) {
        std::smatch m;
        if (std::regex_search(l, m, nc) && merged.count(m[1])) bad.push_back(l);
    }
    return bad;
}

}  // namespace

// Interpreter, NVRTC and, with a GPU, the GPU against the reference.
TEST(Regression, CudaFuzzArgmaxRfactorGlobalReduction) {
    if (!internal::has_nvrtc()) GTEST_SKIP() << "tessel built without the CUDA backend (NVRTC)";
    std::string message;
    GpuVerdict v = check_gpu_steps_json("argmax", kSteps, 20241123, &message);
    EXPECT_TRUE(v == GpuVerdict::CompiledOnly || v == GpuVerdict::PassedOnGpu)
        << gpu_verdict_name(v) << ": " << message;
}

// Without a GPU: the final kernel (argmax reads and writes its outputs) keeps __restrict__ on its
// outputs only and loads nothing read-only through a merged pointer; the rfactor kernel, which
// only stores to its outputs, keeps `const __restrict__` on its input.
TEST(Regression, CudaNoReadOnlyLoadThroughAMergedPointer) {
    if (!internal::has_nvrtc()) GTEST_SKIP() << "tessel built without the CUDA backend (NVRTC)";
    fuzz::PreparedOperator p = fuzz::prepare_operator("argmax", 20241123);
    Schedule s = replay(p.op.outputs, steps_from_json(kSteps));
    std::vector<Tensor> args = p.op.args();
    // sm_80: on sm_90 the second kernel begins with a dependent launch's wait (docs/cuda.md),
    // whose memory clobber keeps NVRTC from any read-only load in it, merged pointer or not.
    Module m = build(s, args, "cuda -arch=sm_80");
    const std::string& cu = m.sources().at("cu");
    const std::string& ptx = m.sources().at("ptx");
    std::smatch sig;
    ASSERT_TRUE(std::regex_search(cu, sig, std::regex(R"(main_kernel1\(([^)]*)\))"))) << cu;
    EXPECT_EQ(sig[1].str().find("const int* __restrict__"), std::string::npos) << sig[1];
    EXPECT_EQ(sig[1].str().find("const float* __restrict__"), std::string::npos) << sig[1];
    EXPECT_NE(sig[1].str().find("int* __restrict__ argmax_v0"), std::string::npos) << sig[1];
    ASSERT_TRUE(std::regex_search(cu, sig, std::regex(R"(main_kernel0\(([^)]*)\))"))) << cu;
    EXPECT_NE(sig[1].str().find("const float* __restrict__ X"), std::string::npos) << sig[1];

    std::string k1 = entry_ptx(ptx, "main_kernel1");
    ASSERT_FALSE(k1.empty()) << ptx;
    std::vector<std::string> bad = merged_pointer_nc_loads(k1);
    EXPECT_TRUE(bad.empty()) << bad.size() << " read-only loads through a merged pointer, e.g. "
                             << (bad.empty() ? "" : bad[0]) << "\n"
                             << k1;
    // The read-only path is still taken where the pointer is one argument's.
    EXPECT_NE(k1.find("ld.global.nc"), std::string::npos) << k1;
    EXPECT_NE(entry_ptx(ptx, "main_kernel0").find("ld.global.nc"), std::string::npos);
}
