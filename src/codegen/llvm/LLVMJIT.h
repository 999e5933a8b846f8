// The LLVM side of build(): the target machine, the optimisation pipeline, assembly, and the JIT
// that loads "llvm-ir" payloads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "tessel/Target.h"
#include "tessel/runtime/Module.h"

namespace tessel::internal {

/// What LLVM needs of a target.
struct LLVMTarget {
    std::string triple;
    std::string cpu;            ///< LLVM's CPU name ("generic" in exported modules without one)
    std::string features;       ///< "+avx2,-fma,...": the differences from the CPU's features
    bool fast_math = false;     ///< "-fast-math": LLVM's fast-math flags on every float operation
    bool strict_float = false;  ///< "-strict-float": no contraction of a * b + c into an fma
};

/// The LLVM view of an llvm Target (already checked against LLVM's tables when it was parsed):
/// the process's triple, its CPU, features and float mode.
LLVMTarget llvm_target_of(const Target& target);

/// A target machine for `target` (optimisation level O3): for the JIT (large code model), or with
/// `for_jit` false for object code the runtime links (small code model, position-independent).
std::unique_ptr<llvm::TargetMachine> make_target_machine(const LLVMTarget& target,
                                                         bool for_jit = true);

/// Runs LLVM's O3 pipeline on `module` for `tm`.
void optimize_module(llvm::Module& module, llvm::TargetMachine& tm);

/// The assembly of `module` for `tm`.
std::string emit_assembly(const llvm::Module& module, llvm::TargetMachine& tm);

/// The relocatable object code of `module` for `tm` (consumes the module's code generation state;
/// the module stays valid).
std::vector<uint8_t> emit_object(llvm::Module& module, llvm::TargetMachine& tm);

/// JIT-compiles `module` (its context handed over with it) into loaded code for a Module.
std::shared_ptr<const LoadedCode> jit_compile(std::unique_ptr<llvm::Module> module,
                                              std::unique_ptr<llvm::LLVMContext> context);

/// The assembly of textual LLVM IR `ll` for `target` (a lazy "asm" source of built modules).
std::string assembly_of_ir(const std::string& ll, const LLVMTarget& target);

/// Registers the "llvm-ir" payload loader (once).
void register_llvm_ir_loader();

/// Initialises LLVM's native target (once).
void initialize_llvm();

}  // namespace tessel::internal
