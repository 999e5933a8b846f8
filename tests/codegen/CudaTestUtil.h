// Helpers for the CUDA backend's tests: lower a schedule, generate CUDA C and the launch plan, and
// compile the source with NVRTC for sm_90 (no GPU needed) when this tessel has NVRTC.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "codegen/Signature.h"
#include "codegen/cuda/CodeGenCUDA.h"
#include "codegen/cuda/NVRTC.h"
#include "common/Builders.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/Lower.h"
#include "tessel/lower/SplitHostDevice.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

namespace tessel::testing {

/// The generated code of `s` over `args`, and the names of its shape variables.
struct CudaOutput {
    internal::CudaCode code;
    std::vector<std::string> shape_vars;
};

/// The target the CUDA tests compile for (no GPU needed).
inline const Target& cuda_test_target() {
    static const Target t("cuda -arch=sm_90");
    return t;
}

/// `f` split into kernels for cuda_test_target() (hand-written IR before codegen_cuda).
inline LoweredFunc split_for_cuda(const LoweredFunc& f) {
    return split_host_device(f, cuda_test_target());
}

/// Lowers for cuda_test_target() and generates (codegen_cuda); throws what they throw.
inline CudaOutput generate_cuda(const Schedule& s, const std::vector<Tensor>& args,
                                const BuildOptions& options = {}, bool fast_math = false) {
    LoweredFunc f = lower(s, args, cuda_test_target(), "main");
    std::vector<Var> shape_vars;
    internal::make_signature(f, options, DeviceType::CUDA, "cuda", &shape_vars);
    CudaOutput out{internal::codegen_cuda(f, shape_vars, {options.in_place, fast_math}), {}};
    for (const Var& v : shape_vars) out.shape_vars.push_back(v.name());
    const char* debug = std::getenv("TESSEL_DEBUG");
    if (debug && std::atoi(debug) >= 3) std::cerr << out.code.source;
    return out;
}

/// Generates, then checks that NVRTC compiles the source for sm_90 (skipped without NVRTC).
inline CudaOutput expect_cuda_compiles(const Schedule& s, const std::vector<Tensor>& args,
                                       const BuildOptions& options = {}, bool fast_math = false) {
    CudaOutput out = generate_cuda(s, args, options, fast_math);
    if (internal::has_nvrtc()) {
        try {
            internal::NvrtcResult r = internal::nvrtc_compile(out.code.source, "sm_90", {});
            EXPECT_FALSE(r.cubin.empty());
        } catch (const std::exception& e) {
            ADD_FAILURE() << e.what();
        }
    }
    return out;
}

/// True if `text` contains `part`.
inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

/// Softmax with one block per row and `threads` threads reducing each row's max and sum
/// (Softmax::block_per_row_schedule); its input and output in *X and *Y.
inline Schedule block_softmax(int n, int m, int threads, Tensor* X, Tensor* Y) {
    Softmax sm(n, m);
    *X = sm.X;
    *Y = sm.Y;
    return sm.block_per_row_schedule(threads);
}

}  // namespace tessel::testing
