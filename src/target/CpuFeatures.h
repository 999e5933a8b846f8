// What Target needs to know about CPUs: the host's CPU name and features, the check of a CPU name
// and feature list, and the widest vector register. Two implementations, one per build:
//  - codegen/llvm/LLVMCpuFeatures.cpp (TESSEL_USE_LLVM): LLVM's host detection
//    (sys::getHostCPUName / getHostCPUFeatures) and its tables of CPUs and features, so a CPU
//    name implies its features and the canonical feature list is the difference from them;
//  - target/CpuFeaturesNoLLVM.cpp (no LLVM, e.g. the GPU host): the host is "generic" with the
//    features /proc/cpuinfo lists that a small table maps to LLVM's names; CPU names and features
//    are not checked (nothing can be compiled for them there), and a few known CPU names imply
//    their vector width.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace tessel::internal {

/// A CPU as a target names it: LLVM's CPU name and the features that differ from what it implies
/// ("+avx512f", "-fma"), sorted by name, each once.
struct CpuDescription {
    std::string cpu;
    std::vector<std::string> features;
    int vector_bits = 0;  ///< the widest vector register the effective features give; 0 for none
};

/// Every instruction-set feature a CPU with `features` (as CpuDescription holds them) has enabled,
/// by name: with LLVM, what the CPU implies adjusted by the differences, without LLVM's tuning
/// flags (slow-*, fast-*, false-deps-*, ...); without LLVM, only the "+" features (the CPU's
/// implied ones are not known there). Apply-best compares records' targets with it.
std::set<std::string> enabled_cpu_features(const std::string& cpu,
                                           const std::vector<std::string>& features);

/// This machine's CPU, resolved (see the file comment).
CpuDescription host_cpu();

/// Checks `cpu` and `mattr` (features in the order given, "+name" or "-name") and returns the
/// canonical description. CompileError naming `spec` and the unknown CPU (listing the known ones)
/// or feature (listing the known ones).
CpuDescription resolve_cpu(const std::string& spec, const std::string& cpu,
                           const std::vector<std::string>& mattr);

}  // namespace tessel::internal
