// Regression test from the GPU schedule fuzzer on the H100 (tests/cuda_fuzz, seed 20241123, 300
// cases): an rfactor'd argmax whose final stage reduces in global memory gave the outputs' initial
// contents back on the GPU while the SPMD interpreter matched the reference:
//   argmax: GPU output 'argmax.v0': 6 of 7 elements differ; worst at [1]: actual 1.51587081e+09
//   expected 11
// The CUDA C was right; NVRTC miscompiled it. The combiner `c ? rf[k, i] : argmax[i]` became one
// load through a selected pointer, emitted as ld.global.nc (the read-only path) because `rf` was a
// `const __restrict__` argument, so it read argmax[i] as it was before the kernel's own stores.
// The printer now leaves __restrict__ off every argument of a kernel that loads a global buffer
// it also stores to (CodeGenCUDA::signature).
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "codegen/cuda/NVRTC.h"
#include "fuzz/support/FuzzCase.h"
#include "gpu/GpuFuzz.h"
#include "tessel/codegen/Build.h"
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

}  // namespace

// Interpreter, NVRTC and, with a GPU, the GPU against the reference.
TEST(Regression, CudaFuzzArgmaxRfactorGlobalReduction) {
    if (!internal::has_nvrtc()) GTEST_SKIP() << "tessel built without the CUDA backend (NVRTC)";
    std::string message;
    GpuVerdict v = check_gpu_steps_json("argmax", kSteps, 20241123, &message);
    EXPECT_TRUE(v == GpuVerdict::CompiledOnly || v == GpuVerdict::PassedOnGpu)
        << gpu_verdict_name(v) << ": " << message;
}

// Without a GPU: the final kernel (argmax reads and writes its outputs) takes no read-only loads,
// and its signature has no __restrict__; the rfactor kernel, which only stores, keeps both.
TEST(Regression, CudaReadWriteKernelHasNoReadOnlyLoads) {
    if (!internal::has_nvrtc()) GTEST_SKIP() << "tessel built without the CUDA backend (NVRTC)";
    fuzz::PreparedOperator p = fuzz::prepare_operator("argmax", 20241123);
    Schedule s = replay(p.op.outputs, steps_from_json(kSteps));
    std::vector<Tensor> args = p.op.args();
    Module m = build(s, args, "cuda -arch=sm_90");
    const std::string& cu = m.sources().at("cu");
    const std::string& ptx = m.sources().at("ptx");
    std::smatch sig;
    ASSERT_TRUE(std::regex_search(cu, sig, std::regex(R"(main_kernel1\(([^)]*)\))"))) << cu;
    EXPECT_EQ(sig[1].str().find("__restrict__"), std::string::npos) << sig[1];
    ASSERT_TRUE(std::regex_search(cu, sig, std::regex(R"(main_kernel0\(([^)]*)\))"))) << cu;
    EXPECT_NE(sig[1].str().find("const float* __restrict__ X"), std::string::npos) << sig[1];

    std::string k1 = entry_ptx(ptx, "main_kernel1");
    ASSERT_FALSE(k1.empty()) << ptx;
    EXPECT_EQ(k1.find("ld.global.nc"), std::string::npos) << k1;
    EXPECT_NE(entry_ptx(ptx, "main_kernel0").find("ld.global.nc"), std::string::npos);
}
