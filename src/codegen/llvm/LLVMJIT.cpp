// The target machine, the O3 pipeline, assembly output and the ORC JIT behind "llvm-ir" payloads.
#include "codegen/llvm/LLVMJIT.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/CodeGen/ReplaceWithVeclib.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <mutex>

#include "tessel/Error.h"
#include "tessel/runtime/Kernel.h"
#include "tessel/runtime/Module.h"
#include "tessel/runtime/ThreadPool.h"
#include "tessel/runtime/Workspace.h"

namespace tessel::internal {

void initialize_llvm() {
    static std::once_flag once;
    std::call_once(once, [] {
        llvm::InitializeNativeTarget();
        llvm::InitializeNativeTargetAsmPrinter();
        llvm::InitializeNativeTargetAsmParser();
    });
}

LLVMTarget llvm_target_of(const Target& target) {
    TESSEL_CHECK(target.kind() == TargetKind::LLVM) << "not an llvm target: " << target.str();
    LLVMTarget t{llvm::sys::getProcessTriple(), target.cpu(), target.feature_string()};
    t.fast_math = target.float_mode() == TargetFloatMode::Fast;
    t.strict_float = target.float_mode() == TargetFloatMode::Strict;
    return t;
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(const LLVMTarget& t, bool for_jit) {
    std::string error;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(t.triple, error);
    if (!target) TESSEL_THROW(CompileError) << "llvm: " << error;
    llvm::TargetOptions options;
    std::unique_ptr<llvm::TargetMachine> tm(
        target->createTargetMachine(t.triple, t.cpu, t.features, options, llvm::Reloc::PIC_,
                                    for_jit ? std::nullopt : std::optional(llvm::CodeModel::Small),
                                    llvm::CodeGenOptLevel::Aggressive, for_jit));
    if (!tm) TESSEL_THROW(CompileError) << "llvm: no target machine for " << t.triple;
    return tm;
}

// Vector math calls go to glibc's libmvec (a vectorized exp must not become lane-wise expf
// calls). Its 8-lane float / 4-lane double variants need AVX2, so the mapping is used only where
// the target has it.
bool use_libmvec(const llvm::TargetMachine& tm) {
    return tm.getTargetTriple().isX86() && tm.getTargetTriple().isOSLinux() &&
           tm.getTargetFeatureString().contains("+avx2");
}

void optimize_module(llvm::Module& module, llvm::TargetMachine& tm) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::TargetLibraryInfoImpl tlii(tm.getTargetTriple());
    bool libmvec = use_libmvec(tm);
    if (libmvec) {
        tlii.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86,
                                                tm.getTargetTriple());
    }
    fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });
    // LLVM's loop unroller and its loop and SLP vectorizers run after the schedule's own
    // vectorize, unroll and auto_unroll_max_step: they finish what a schedule leaves open (a
    // register tile the schedule did not unroll, an inner loop it did not vectorise). Measured on
    // random 1024^3 GEMM schedules (docs/perf/tune-gemm-cpu.md): the best of a 128-trial tuning
    // rose from 293 to 511 GFLOP/s, for about 30 % more optimisation time per candidate.
    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = true;
    tuning.LoopVectorization = true;
    tuning.LoopInterleaving = true;
    tuning.SLPVectorization = true;
    llvm::PassBuilder pb(&tm, tuning);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    if (libmvec) mpm.addPass(llvm::createModuleToFunctionPassAdaptor(llvm::ReplaceWithVeclib()));
    mpm.run(module, mam);
}

std::string emit_assembly(const llvm::Module& module, llvm::TargetMachine& tm) {
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(module);
    llvm::SmallString<0> text;
    llvm::raw_svector_ostream os(text);
    llvm::legacy::PassManager pm;
    if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) return "";
    pm.run(*copy);
    return std::string(text.str());
}

std::vector<uint8_t> emit_object(llvm::Module& module, llvm::TargetMachine& tm) {
    llvm::SmallVector<char, 0> object;
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager pm;
    if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
        TESSEL_THROW(CompileError) << "llvm: the target cannot emit object files";
    pm.run(module);
    return std::vector<uint8_t>(object.begin(), object.end());
}

namespace {

// JIT-compiled code of one payload; the LLJIT instance owns it.
class JITCode : public LoadedCode {
public:
    explicit JITCode(std::unique_ptr<llvm::orc::LLJIT> jit) : jit_(std::move(jit)) {}
    KernelEntry lookup(const std::string& name) const override {
        std::lock_guard<std::mutex> lock(mutex_);
        auto address = jit_->lookup(name);
        if (!address) {
            llvm::consumeError(address.takeError());
            return nullptr;
        }
        return address->toPtr<KernelEntry>();
    }

private:
    mutable std::mutex mutex_;
    std::unique_ptr<llvm::orc::LLJIT> jit_;
};

template <typename T>
T check(llvm::Expected<T> value, const char* what) {
    if (!value) {
        TESSEL_THROW(RuntimeError)
            << "llvm-ir payload: " << what << ": " << llvm::toString(value.takeError());
    }
    return std::move(*value);
}

// The runtime symbols kernels call are defined explicitly: the Python extension loads tessel
// with local symbols, where a search of the process would not find them.
void define_runtime_symbols(llvm::orc::LLJIT& jit) {
    llvm::orc::SymbolMap symbols;
    auto add = [&](const char* name, void* address) {
        symbols[jit.mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                              llvm::JITSymbolFlags::Exported};
    };
    add("tessel_parallel_for", reinterpret_cast<void*>(&tessel_parallel_for));
    add("tessel_report_kernel_error", reinterpret_cast<void*>(&tessel_report_kernel_error));
    add("tessel_workspace_alloc", reinterpret_cast<void*>(&tessel_workspace_alloc));
    add("tessel_workspace_free", reinterpret_cast<void*>(&tessel_workspace_free));
    llvm::cantFail(jit.getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols))));
    // libc and libm (aligned_alloc, free, expf ...) come from the process.
    jit.getMainJITDylib().addGenerator(
        check(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                  jit.getDataLayout().getGlobalPrefix()),
              "process symbols"));
    // libmvec, which vectorized math calls (optimize_module) need; absent on non-glibc systems.
    auto mvec = llvm::orc::DynamicLibrarySearchGenerator::Load(
        "libmvec.so.1", jit.getDataLayout().getGlobalPrefix());
    if (mvec) {
        jit.getMainJITDylib().addGenerator(std::move(*mvec));
    } else {
        llvm::consumeError(mvec.takeError());
    }
}

// Parses textual IR; RuntimeError on malformed text.
std::unique_ptr<llvm::Module> parse_ir(const char* data, size_t size, llvm::LLVMContext& context) {
    llvm::SMDiagnostic diag;
    // The IR parser reads up to a terminating NUL, which a copy into a MemoryBuffer provides.
    std::unique_ptr<llvm::MemoryBuffer> buffer =
        llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(data, size), "payload");
    std::unique_ptr<llvm::Module> module = llvm::parseIR(buffer->getMemBufferRef(), diag, context);
    if (!module) TESSEL_THROW(RuntimeError) << "llvm-ir payload: " << diag.getMessage().str();
    return module;
}

std::shared_ptr<const LoadedCode> load_llvm_ir(const std::vector<uint8_t>& payload) {
    initialize_llvm();
    auto context = std::make_unique<llvm::LLVMContext>();
    std::unique_ptr<llvm::Module> module =
        parse_ir(reinterpret_cast<const char*>(payload.data()), payload.size(), *context);
    return jit_compile(std::move(module), std::move(context));
}

}  // namespace

std::string assembly_of_ir(const std::string& ll, const LLVMTarget& target) {
    initialize_llvm();
    llvm::LLVMContext context;
    std::unique_ptr<llvm::Module> module = parse_ir(ll.data(), ll.size(), context);
    std::unique_ptr<llvm::TargetMachine> tm = make_target_machine(target);
    return emit_assembly(*module, *tm);
}

std::shared_ptr<const LoadedCode> jit_compile(std::unique_ptr<llvm::Module> module,
                                              std::unique_ptr<llvm::LLVMContext> context) {
    initialize_llvm();
    auto jtmb = check(llvm::orc::JITTargetMachineBuilder::detectHost(), "host");
    jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    auto jit = check(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create(), "JIT");
    define_runtime_symbols(*jit);
    module->setDataLayout(jit->getDataLayout());
    llvm::Error err =
        jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context)));
    if (err) TESSEL_THROW(RuntimeError) << "llvm-ir payload: " << llvm::toString(std::move(err));
    return std::make_shared<const JITCode>(std::move(jit));
}

void register_llvm_ir_loader() {
    static std::once_flag once;
    std::call_once(once, [] { register_payload_loader("llvm-ir", load_llvm_ir); });
}

}  // namespace tessel::internal
