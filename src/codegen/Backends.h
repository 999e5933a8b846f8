// The backends behind build(): Build.cpp picks one by the target's kind.
#pragma once

#include <vector>

#include "tessel/Target.h"
#include "tessel/codegen/Build.h"

namespace tessel::internal {

/// Throws CompileError when the LLVM backend is not built in (NoLLVM.cpp).
void check_llvm_backend(const Target& target);
/// The LLVM backend (codegen/llvm/BuildLLVM.cpp, or NoLLVM.cpp's error): one module with a
/// kernel per function, in order.
Module build_llvm(const std::vector<LoweredFunc>& fs, const Target& target,
                  const BuildOptions& options);

/// Throws CompileError when NVRTC is not built in.
void check_cuda_backend(const Target& target);
/// The CUDA backend (codegen/cuda/BuildCUDA.cpp).
Module build_cuda(const LoweredFunc& f, const Target& target, const BuildOptions& options);

}  // namespace tessel::internal
