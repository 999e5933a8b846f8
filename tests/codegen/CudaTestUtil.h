// Helpers for the CUDA backend's tests: lower a schedule, generate CUDA C and the launch plan, and
// compile the source with NVRTC for sm_90 (no GPU needed) when this tessel has NVRTC.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/Signature.h"
#include "codegen/cuda/CodeGenCUDA.h"
#include "codegen/cuda/NVRTC.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/Schedule.h"

namespace tessel::testing {

/// The generated code of `s` over `args`, and the names of its shape variables.
struct CudaOutput {
    internal::CudaCode code;
    std::vector<std::string> shape_vars;
};

/// Lowers and generates (codegen_cuda); throws what they throw.
inline CudaOutput generate_cuda(const Schedule& s, const std::vector<Tensor>& args,
                                const BuildOptions& options = {}, bool fast_math = false) {
    LoweredFunc f = lower(s, args, "main");
    std::vector<Var> shape_vars;
    internal::make_signature(f, options, DeviceType::CUDA, "cuda", &shape_vars);
    CudaOutput out{internal::codegen_cuda(f, shape_vars, {options.in_place, fast_math}), {}};
    for (const Var& v : shape_vars) out.shape_vars.push_back(v.name());
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

}  // namespace tessel::testing
