// The backends behind build(): Build.cpp picks one by the target string's first word.
#pragma once

#include <string>

#include "tessel/codegen/Build.h"

namespace tessel::internal {

/// Throws CompileError for a malformed "llvm ..." target (or when LLVM is not built in).
void check_llvm_target(const std::string& target);
/// The LLVM backend (codegen/llvm/BuildLLVM.cpp, or NoLLVM.cpp's error).
Module build_llvm(const LoweredFunc& f, const std::string& target, const BuildOptions& options);

/// Throws CompileError for a malformed "cuda ..." target (or when NVRTC is not built in).
void check_cuda_target(const std::string& target);
/// The CUDA backend (codegen/cuda/BuildCUDA.cpp).
Module build_cuda(const LoweredFunc& f, const std::string& target, const BuildOptions& options);

}  // namespace tessel::internal
