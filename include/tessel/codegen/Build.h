// build(): a schedule (or a lowered function) to a runtime Module of machine code.
//
//   Module m = build(s, {A, B, C}, "llvm -mattr=+avx2");
//   m.get("main")({a, b, c});
//
// Only available when tessel is built with the LLVM backend (TESSEL_USE_LLVM); without it build()
// throws CompileError. The module's payload (format "llvm-ir") is the optimised LLVM IR,
// JIT-compiled with ORC LLJIT when the module is made or loaded; the Module keeps the compiled code
// alive.
#pragma once

#include <string>
#include <vector>

#include "tessel/lower/LoweredFunc.h"
#include "tessel/runtime/Module.h"
#include "tessel/schedule/Schedule.h"

namespace tessel {

/// What build() may assume of a kernel's arguments beyond the signature.
struct BuildOptions {
    /// Names of arguments that may share memory with other arguments (e.g. an elementwise
    /// kernel computing its output over its input). They are exempt from the runtime's overlap
    /// check, and the generated code makes no no-alias assumption about them; every other
    /// argument is assumed disjoint from all others (the runtime checks it before each call).
    std::vector<std::string> in_place;
};

/// Lowers `s` over `args` (lower() in lower/Lower.h) and compiles it for `target` into a module
/// with one kernel called `name`. Targets: "llvm" (the host CPU: its features, generic tuning),
/// "llvm -mcpu=<cpu>", "llvm -mattr=+avx2,-fma,...", "llvm -fast-math" (LLVM's fast-math
/// flags on every float operation: reassociation, no NaNs or infinities; off by default) and
/// "llvm -strict-float" (no contraction of a * b + c into a fused multiply-add, which is allowed
/// by default; ir/IR.h, "Floats"); options combine. Throws CompileError for any other target
/// string, an unknown CPU or feature, an unknown argument name in `options`, or IR the backend
/// cannot compile.
Module build(const Schedule& s, const std::vector<Tensor>& args, const std::string& target = "llvm",
             const std::string& name = "main", const BuildOptions& options = {});

/// Compiles an already lowered function (after storage flattening) for `target`.
Module build(const LoweredFunc& f, const std::string& target = "llvm",
             const BuildOptions& options = {});

/// Registers the loader of "llvm-ir" payloads, so Module::load() works in a process that has not
/// called build() yet. build() registers it itself. Thread-safe; a no-op without LLVM.
void register_llvm_payload_loader();

/// True when this tessel was built with the LLVM backend.
bool has_llvm_backend();
/// True when this tessel was built with the CUDA backend's compiler (NVRTC): build() accepts
/// "cuda" targets. Running the kernels also needs a GPU and its driver (runtime/CUDA.h).
bool has_cuda_backend();

}  // namespace tessel
