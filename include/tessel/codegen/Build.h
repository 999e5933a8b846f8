// build(): a lowered function to a runtime Module of machine code. build() of a schedule, which
// lowers it first and decides what a schedule without steps becomes, is driver/Build.h.
//
//   Module m = build(lower(s, {A, B, C}, target), target);   // exactly this loop nest
//   m.get("main")({a, b, c});
//
// Only available when tessel is built with the LLVM backend (TESSEL_USE_LLVM); without it build()
// throws CompileError. The module's payload (format "cpu-object") is the object code of the
// optimised LLVM IR, which the runtime links into memory itself (runtime/Module.h), so a saved
// module loads in a process without LLVM; the "ll" source is the optimised IR. Where the runtime
// cannot link objects (not x86-64 Linux) the payload is the IR ("llvm-ir"), JIT-compiled with ORC
// LLJIT when the module is made or loaded. The Module keeps the loaded code alive.
#pragma once

#include <string>
#include <vector>

#include "tessel/Target.h"
#include "tessel/lower/Lower.h"
#include "tessel/lower/LoweredFunc.h"
#include "tessel/runtime/Module.h"
#include "tessel/schedule/Schedule.h"

namespace tessel {

/// What build() may assume of a kernel's arguments beyond the signature, and how it reports.
struct BuildOptions {
    /// Names of arguments that may share memory with other arguments (e.g. an elementwise
    /// kernel computing its output over its input). They are exempt from the runtime's overlap
    /// check, and the generated code makes no no-alias assumption about them; every other
    /// argument is assumed disjoint from all others (the runtime checks it before each call).
    std::vector<std::string> in_place;
    /// The options of lower() and of the backends' output, read from the environment once, when
    /// the BuildOptions is made: `lower.debug` >= 3 (TESSEL_DEBUG=3) prints the optimised LLVM IR
    /// or the CUDA C of each built kernel.
    LowerOptions lower = LowerOptions::from_env();
    /// Whether a schedule without steps may be replaced by the shipped tuning logs' record for
    /// its DAG and target (auto_schedule/records/ShippedLogs.h). false compiles the loop nest as
    /// written (outside an apply-best context), as a baseline must.
    bool tuning_logs = true;
};

/// Compiles an already lowered function (after storage flattening) for `target`. A function
/// lowered without a GPU target is split into kernels here (split_host_device) for cuda. llvm
/// targets need the LLVM backend, cuda targets NVRTC (CompileError naming the missing backend).
Module build(const LoweredFunc& f, const Target& target, const BuildOptions& options = {});

/// Compiles several lowered functions into one module, a kernel each in order (a kernel and its
/// pre_transform, lower/Lower.h): CPU targets only (CompileError otherwise, and for none).
/// `options.in_place` names arguments of the first function.
Module build(const std::vector<LoweredFunc>& fs, const Target& target,
             const BuildOptions& options = {});

/// build() of a lowered function for the target string `target`, parsed once.
Module build(const LoweredFunc& f, const std::string& target = "llvm",
             const BuildOptions& options = {});

/// Registers the loader of "llvm-ir" payloads, so Module::load() works in a process that has not
/// called build() yet. build() registers it itself. Thread-safe; a no-op without LLVM.
void register_llvm_payload_loader();

/// Throws CompileError naming the missing backend when this tessel cannot compile for `target`'s
/// kind (llvm: the LLVM backend; cuda: NVRTC).
void require_backend(const Target& target);

/// True when this tessel was built with the LLVM backend.
bool has_llvm_backend();
/// True when this tessel was built with the CUDA backend's compiler (NVRTC): build() accepts
/// "cuda" targets. Running the kernels also needs a GPU and its driver (runtime/CUDA.h).
bool has_cuda_backend();

}  // namespace tessel
