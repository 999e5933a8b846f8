// The LLVM backend's build: check, generate LLVM IR, optimise, emit object code and wrap it, linked
// into memory by the runtime's loader (or JIT-compiled where that loader does not run), in a
// Module.
#include "tessel/codegen/Build.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <unordered_set>

#include "codegen/Backends.h"
#include "codegen/Signature.h"
#include "codegen/llvm/CodeGenLLVM.h"
#include "codegen/llvm/LLVMJIT.h"
#include "runtime/CpuObjectLoader.h"
#include "tessel/Error.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/Lower.h"
#include "tessel/lower/VerifyLowered.h"

namespace tessel {

namespace {

std::string to_text(const llvm::Module& module) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module.print(os, nullptr);
    return text;
}

}  // namespace

bool has_llvm_backend() {
    return true;
}

void register_llvm_payload_loader() {
    internal::register_llvm_ir_loader();
}

namespace internal {

void check_llvm_backend(const Target&) {}

Module build_llvm(const std::vector<LoweredFunc>& fs, const Target& target,
                  const BuildOptions& options) {
    TESSEL_CHECK(!fs.empty()) << "build_llvm of no function";
    LLVMTarget t = llvm_target_of(target);
    bool object_code = internal::cpu_object_loader_supported();
    std::unique_ptr<llvm::TargetMachine> tm = internal::make_target_machine(t, !object_code);
    auto context = std::make_unique<llvm::LLVMContext>();
    auto owned_module = std::make_unique<llvm::Module>(fs[0].name, *context);
    llvm::Module& module = *owned_module;
    module.setTargetTriple(t.triple);
    module.setDataLayout(tm->createDataLayout());
    using FloatMode = internal::CodeGenLLVM::FloatMode;
    FloatMode mode = t.fast_math      ? FloatMode::Fast
                     : t.strict_float ? FloatMode::Strict
                                      : FloatMode::Contract;
    internal::CodeGenLLVM codegen(module, t.cpu, t.features, mode);
    std::vector<KernelSignature> sigs;
    for (size_t i = 0; i < fs.size(); ++i) {
        const LoweredFunc& f = fs[i];
        verify_lowered(f);
        // in_place names the first function's arguments (the kernel's); the others take none.
        BuildOptions own = options;
        if (i > 0) own.in_place.clear();
        std::vector<Var> shape_vars;
        sigs.push_back(make_signature(f, own, DeviceType::CPU, "llvm", &shape_vars));
        std::vector<bool> in_place;
        for (const ArgSpec& a : sigs.back().args) in_place.push_back(a.in_place);
        codegen.add_function(f, shape_vars, in_place);
    }
    std::string errors;
    llvm::raw_string_ostream es(errors);
    if (llvm::verifyModule(module, &es)) {
        TESSEL_CHECK(false) << "codegen produced invalid LLVM IR: " << errors << "\n"
                            << to_text(module);
    }
    internal::optimize_module(module, *tm);
    std::string ll = to_text(module);
    if (options.lower.debug >= 3) std::cerr << ll;
    // The assembly, a second code generation, is only made when asked for.
    std::map<std::string, SourceGenerator> lazy = {
        {"asm", [ll, t] { return internal::assembly_of_ir(ll, t); }}};
    if (object_code) {
        // Object code, linked into memory by the runtime: the same bytes load in any process
        // linked with libtessel_runtime alone (a measurement worker), without LLVM.
        std::vector<uint8_t> object = internal::emit_object(module, *tm);
        std::shared_ptr<const LoadedCode> code = internal::load_cpu_object(object);
        return Module(std::move(sigs), internal::kCpuObjectFormat, std::move(object),
                      std::move(code), {{"ll", ll}}, std::move(lazy));
    }
    internal::register_llvm_ir_loader();
    // Elsewhere the optimised module goes to the JIT as it is (no re-parse).
    std::shared_ptr<const LoadedCode> code =
        internal::jit_compile(std::move(owned_module), std::move(context));
    return Module(std::move(sigs), "llvm-ir", std::vector<uint8_t>(ll.begin(), ll.end()),
                  std::move(code), {{"ll", ll}}, std::move(lazy));
}

}  // namespace internal

}  // namespace tessel
