// Target: what code is generated for, parsed once from a target string and passed by value
// through lower(), build(), the backends and the tuner.
//
//   Target t("llvm -mcpu=skylake-avx512 -mattr=-avx512bw");
//   t.str();                       // the canonical string: what tuning records key on
//   t.vector_lanes(Float(32));     // 16
//   Target g("cuda -arch=sm_90");
//   g.max_shared_memory_per_block_optin();  // 232448 (from the driver when device 0 is an sm_90)
//
// Target strings are a kind followed by options (docs/target.md):
//   llvm  [-mcpu=<cpu>] [-mattr=+f,-g,...] [-num-cores=<n>] [-l1d=<size>] [-l2=<size>]
//         [-l3=<size>] [-fast-math | -strict-float]
//   cuda  [-arch=sm_XX] [-num-cores=<n>] [-fast-math]
// `llvm` without -mcpu means this machine: str() spells out the host's CPU name and features.
// The cache sizes (bytes, or with a K, M or G suffix: -l2=2M) default to the host's, read from
// sysfs (target/CpuCaches.h), for any -mcpu: the default schedules block for them.
// `cuda` without -arch means device 0's architecture (CompileError where there is no GPU); -arch
// takes an architecture of tessel's table (known_cuda_archs()) or device 0's own; -num-cores
// replaces the SM count (a part with more or fewer SMs than the driver's or the table's).
// Any unknown kind, option or value is a CompileError that names it and lists the legal ones.
//
// The canonical string is kind, then options in a fixed order, each written once:
//   llvm -mcpu=<cpu> [-mattr=<features>] -num-cores=<n> [-l1d=<size>] [-l2=<size>] [-l3=<size>]
//        [-fast-math | -strict-float]
//   cuda -arch=<sm_XX> [-num-cores=<n>] [-fast-math]
// where the cache sizes appear when the spec gave them (the host's are not spelled out: records
// tuned before the sizes existed keep their keys), and <features> is the set of features that
// differ from those the CPU implies, sorted by name (with LLVM built in: "-mcpu=haswell
// -mattr=+avx2" is "-mcpu=haswell", as haswell has AVX2). Without LLVM the CPU's implied features
// are not known, so the features are only deduplicated (the last mention of a feature wins) and
// sorted; see docs/target.md for what each build prints. Target(t.str()) == t for every target.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/ir/Type.h"

namespace tessel {

/// What a target generates code for.
enum class TargetKind : uint8_t {
    LLVM,  ///< a CPU, through the LLVM backend
    CUDA,  ///< an NVIDIA GPU, through CUDA C and NVRTC
};

/// "llvm" or "cuda".
const char* target_kind_name(TargetKind kind);

/// How float operations may be rewritten (ir/IR.h, "Floats"; docs/codegen.md).
enum class TargetFloatMode : uint8_t {
    Contract,  ///< the default: a * b + c may become a fused multiply-add
    Strict,    ///< "-strict-float" (llvm): every operation rounded, no contraction
    Fast,      ///< "-fast-math": reassociation, no NaNs or infinities, approximate functions
};

/// The limits of a GPU that schedules and the search must respect (Target's GPU queries).
struct GpuLimits {
    int max_threads_per_block = 0;
    int64_t max_shared_memory_per_block = 0;        ///< without opting in (48 KB)
    int64_t max_shared_memory_per_block_optin = 0;  ///< the most a kernel may request
    int max_registers_per_block = 0;                ///< 32-bit registers
    int warp_size = 0;
    int max_vthread_extent = 0;  ///< the search's cap on a vthread loop's extent
    int sm_count = 0;            ///< streaming multiprocessors
    /// True when the numbers were read from device 0's driver (its architecture is the target's);
    /// false when they come from tessel's table by -arch (docs/target.md).
    bool from_driver = false;
};

/// A parsed target (see the file comment). Cheap to copy; immutable.
class Target {
public:
    /// Parses `spec`; CompileError for an unknown kind, option or value (naming it and listing
    /// the legal ones), or for a "cuda" target without -arch on a machine without a GPU.
    explicit Target(const std::string& spec);

    /// This machine's CPU: Target("llvm").
    static Target host();

    /// The kind (llvm, cuda).
    TargetKind kind() const { return kind_; }
    /// "llvm" or "cuda".
    std::string kind_name() const { return target_kind_name(kind_); }
    /// True for GPU targets (cuda).
    bool is_gpu() const { return kind_ == TargetKind::CUDA; }

    /// The canonical string (see the file comment): equal for two spellings of one target.
    const std::string& str() const { return str_; }

    /// llvm: LLVM's CPU name ("skylake-avx512"; the host's for plain "llvm"). Empty for cuda.
    const std::string& cpu() const { return cpu_; }
    /// llvm: the features that differ from the CPU's ("+avx512f", "-fma"), sorted by name.
    const std::vector<std::string>& features() const { return features_; }
    /// The features as LLVM takes them: "+a,-b" (empty when there are none).
    std::string feature_string() const;
    /// llvm: whether the CPU has the instruction-set feature `name`, LLVM's name for it
    /// ("avx512f", "avx512vnni", "avxvnni", "avx512bf16", "amx-int8"), as its CPU name implies
    /// and -mattr adjusts (without LLVM: only the host's features and those -mattr adds). False
    /// for cuda.
    bool has_feature(const std::string& name) const;
    /// cuda: the architecture, "sm_90" (device 0's for plain "cuda"). Empty for llvm.
    const std::string& arch() const { return arch_; }
    /// cuda: the architecture's compute capability, 86 for "sm_86" (0 for llvm).
    int compute_capability() const;
    /// The float mode ("-fast-math", "-strict-float", or the default).
    TargetFloatMode float_mode() const { return float_mode_; }

    /// Lanes of the widest vector register for elements of `t`'s element type: llvm, the
    /// register width the CPU's features give (AVX-512: 512 bits, AVX: 256, SSE or NEON: 128,
    /// none: 1 lane); cuda, 16 bytes (a float4 access). At least 1.
    int vector_lanes(Type t) const;
    /// Bytes of a cache line: 64 for CPUs, 128 for NVIDIA GPUs (an L1 line).
    int cache_line_bytes() const;
    /// llvm: the cores parallel loops may use (-num-cores; default the host's hardware threads).
    /// cuda: the number of streaming multiprocessors (sm_count(); -num-cores sets it).
    int num_cores() const;
    /// llvm: bytes of one core's level-1 data cache (-l1d; default the host's). 0 for cuda.
    int64_t l1d_cache_bytes() const { return l1d_; }
    /// llvm: bytes of one core's level-2 cache (-l2; default the host's). 0 for cuda.
    int64_t l2_cache_bytes() const { return l2_; }
    /// llvm: bytes of the last-level cache (-l3; default the host's, its L2 where it has no L3).
    /// 0 for cuda.
    int64_t l3_cache_bytes() const { return l3_; }
    /// A line for people: llvm, "2 cores, 512-bit vectors, L1d 48 KiB, L2 2 MiB, L3 32 MiB
    /// (caches from sysfs)"; cuda, "sm_90: 132 SMs, 227 KiB shared memory per block (driver)".
    std::string describe() const;

    /// cuda: the limits below, at once. CompileError for a CPU target.
    const GpuLimits& gpu_limits() const;
    /// cuda: at most this many threads in a block. CompileError for a CPU target.
    int max_threads_per_block() const { return gpu_limits().max_threads_per_block; }
    /// cuda: bytes of shared memory a block may use without opting in (48 KB).
    int64_t max_shared_memory_per_block() const { return gpu_limits().max_shared_memory_per_block; }
    /// cuda: bytes of shared memory a block may use once the kernel opts in (dynamic shared).
    int64_t max_shared_memory_per_block_optin() const {
        return gpu_limits().max_shared_memory_per_block_optin;
    }
    /// cuda: 32-bit registers available to one block.
    int max_registers_per_block() const { return gpu_limits().max_registers_per_block; }
    /// cuda: threads per warp (32).
    int warp_size() const { return gpu_limits().warp_size; }
    /// cuda: the largest vthread extent the search proposes (8, as Ansor's).
    int max_vthread_extent() const { return gpu_limits().max_vthread_extent; }
    /// cuda: streaming multiprocessors (-num-cores where given, else the driver's count, or the
    /// table's for -arch).
    int sm_count() const { return gpu_limits().sm_count; }

    /// The GPU architectures tessel's table knows ("sm_70", ..., "sm_120"), each also accepted
    /// with an "a" or "f" suffix.
    static std::vector<std::string> known_cuda_archs();

    /// Targets are equal when their canonical strings are.
    bool operator==(const Target& o) const { return str_ == o.str_; }
    bool operator!=(const Target& o) const { return str_ != o.str_; }

private:
    Target() = default;
    void parse_llvm(const std::string& spec, const std::vector<std::string>& words);
    void parse_cuda(const std::string& spec, const std::vector<std::string>& words);
    void make_str();

    TargetKind kind_ = TargetKind::LLVM;
    std::string cpu_;
    std::vector<std::string> features_;
    std::string arch_;
    TargetFloatMode float_mode_ = TargetFloatMode::Contract;
    int num_cores_ = 1;  // llvm: the cores; cuda: -num-cores as given (0: the GPU's SM count)
    int64_t l1d_ = 0, l2_ = 0, l3_ = 0;  // llvm: the cache sizes
    std::string caches_given_;           // llvm: the -l1d / -l2 / -l3 options of str(), in order
    std::string caches_source_;          // llvm: "sysfs", "sysconf", "assumed" or "target string"
    int vector_bits_ = 0;                // llvm: the widest vector register; 0 when there is none
    GpuLimits gpu_;
    std::string str_;
};

}  // namespace tessel
