// CPU names and features through LLVM (target/CpuFeatures.h): the host's, checked against LLVM's
// tables of the process's target, and written as the difference from what the CPU name implies.
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <memory>
#include <set>

#include "codegen/llvm/LLVMJIT.h"
#include "target/CpuFeatures.h"
#include "tessel/Error.h"

namespace tessel::internal {

namespace {

// LLVM's tables for the process's triple, read once.
struct Tables {
    std::string triple;
    const llvm::Target* target = nullptr;
    std::set<std::string> cpus;
    std::set<std::string> features;  // sorted by name: the canonical order
};

const Tables& tables() {
    static const Tables t = [] {
        initialize_llvm();
        Tables t;
        t.triple = llvm::sys::getProcessTriple();
        std::string error;
        t.target = llvm::TargetRegistry::lookupTarget(t.triple, error);
        TESSEL_CHECK(t.target) << "LLVM has no target for this process (" << t.triple
                               << "): " << error;
        std::unique_ptr<llvm::MCSubtargetInfo> sti(
            t.target->createMCSubtargetInfo(t.triple, "generic", ""));
        for (const llvm::SubtargetSubTypeKV& kv : sti->getAllProcessorDescriptions())
            t.cpus.insert(kv.Key);
        for (const llvm::SubtargetFeatureKV& kv : sti->getAllProcessorFeatures())
            t.features.insert(kv.Key);
        return t;
    }();
    return t;
}

std::string join(const std::set<std::string>& items) {
    std::string out;
    for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
    return out;
}

void check(const std::string& spec, const std::string& cpu, const std::vector<std::string>& mattr) {
    const Tables& t = tables();
    if (cpu != "generic" && !t.cpus.count(cpu)) {
        TESSEL_THROW(CompileError) << "target '" << spec << "': unknown CPU '" << cpu << "' for "
                                   << t.triple << " (known: generic, " << join(t.cpus) << ")";
    }
    for (const std::string& f : mattr) {
        if (!t.features.count(f.substr(1))) {
            TESSEL_THROW(CompileError)
                << "target '" << spec << "': unknown CPU feature '" << f << "' for " << t.triple
                << " (known: " << join(t.features) << "; write features as +name or -name)";
        }
    }
}

bool has(const llvm::MCSubtargetInfo& sti, const char* feature) {
    return tables().features.count(feature) && sti.checkFeatures(std::string("+") + feature);
}

int vector_bits(const llvm::MCSubtargetInfo& sti) {
    if (has(sti, "avx512f")) return 512;
    if (has(sti, "avx")) return 256;
    if (has(sti, "sse") || has(sti, "neon")) return 128;
    return 0;
}

}  // namespace

CpuDescription resolve_cpu(const std::string& spec, const std::string& cpu,
                           const std::vector<std::string>& mattr) {
    check(spec, cpu, mattr);
    const Tables& t = tables();
    std::string fs;
    for (const std::string& f : mattr) fs += (fs.empty() ? "" : ",") + f;
    std::unique_ptr<llvm::MCSubtargetInfo> base(t.target->createMCSubtargetInfo(t.triple, cpu, ""));
    std::unique_ptr<llvm::MCSubtargetInfo> eff(t.target->createMCSubtargetInfo(t.triple, cpu, fs));
    CpuDescription d;
    d.cpu = cpu;
    // Feature sets are closed under implication, so the difference applies in any order.
    for (const std::string& f : t.features) {
        bool on = eff->checkFeatures("+" + f);
        if (on != base->checkFeatures("+" + f)) d.features.push_back((on ? "+" : "-") + f);
    }
    d.vector_bits = vector_bits(*eff);
    return d;
}

// LLVM lists tuning flags (how fast something is on a CPU model) among the features; they say
// nothing of which instructions exist, so feature comparisons leave them out.
bool is_tuning_flag(const std::string& f) {
    static const char* const prefixes[] = {
        "tuning",     "slow-",        "fast-",       "false-deps-",  "prefer-",
        "avoid-",     "idivl-to-",    "idivq-to-",   "lea-",         "use-",
        "pad-short-", "branchfusion", "macrofusion", "allow-light-", "sbb-dep-",
        "harden-",    "retpoline",    "lvi-",        "no-bypass-",   "fuse-"};
    for (const char* p : prefixes)
        if (f.rfind(p, 0) == 0) return true;
    return false;
}

std::set<std::string> enabled_cpu_features(const std::string& cpu,
                                           const std::vector<std::string>& features) {
    const Tables& t = tables();
    std::string fs;
    for (const std::string& f : features) fs += (fs.empty() ? "" : ",") + f;
    std::unique_ptr<llvm::MCSubtargetInfo> eff(t.target->createMCSubtargetInfo(t.triple, cpu, fs));
    std::set<std::string> on;
    for (const std::string& f : t.features)
        if (!is_tuning_flag(f) && eff->checkFeatures("+" + f)) on.insert(f);
    return on;
}

CpuDescription host_cpu() {
    static const CpuDescription host = [] {
        const Tables& t = tables();
        std::string cpu = llvm::sys::getHostCPUName().str();
        if (!t.cpus.count(cpu)) cpu = "generic";
        std::vector<std::string> mattr;
        for (const auto& f : llvm::sys::getHostCPUFeatures()) {
            std::string name = f.first().str();
            if (t.features.count(name)) mattr.push_back((f.second ? "+" : "-") + name);
        }
        std::sort(mattr.begin(), mattr.end(), [](const std::string& a, const std::string& b) {
            return a.substr(1) < b.substr(1);
        });
        return resolve_cpu("llvm", cpu, mattr);
    }();
    return host;
}

}  // namespace tessel::internal
