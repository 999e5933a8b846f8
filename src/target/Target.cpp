// Target: parsing a target string once, its canonical string, and the queries of the search.
#include "tessel/Target.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <sstream>
#include <thread>

#include "target/CpuFeatures.h"
#include "target/GpuArchTable.h"
#include "tessel/Error.h"
#include "tessel/runtime/CUDA.h"

namespace tessel {

namespace {

const char* const kLLVMOptions =
    "-mcpu=<cpu>, -mattr=+feature,-feature,..., -num-cores=<n>, -fast-math, -strict-float";
const char* const kCUDAOptions = "-arch=sm_XX, -fast-math";

std::vector<std::string> split_words(const std::string& spec) {
    std::istringstream in(spec);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    return words;
}

std::string join(const std::vector<std::string>& items, const char* sep) {
    std::string out;
    for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
    return out;
}

// The value of "key=value" when `word` starts with `key=`; false otherwise.
bool option_value(const std::string& word, const char* key, std::string* value) {
    std::string prefix = std::string(key) + "=";
    if (word.rfind(prefix, 0) != 0) return false;
    *value = word.substr(prefix.size());
    return true;
}

[[noreturn]] void unknown_option(const std::string& spec, const std::string& word, const char* kind,
                                 const char* legal) {
    TESSEL_THROW(CompileError) << "target '" << spec << "': unknown option '" << word << "' for "
                               << kind << " (options: " << legal << ")";
}

// Sets `*slot` to `value`, refusing an empty value or a second mention of `key`.
void set_once(const std::string& spec, const char* key, const std::string& value, std::string* slot,
              const char* expected) {
    if (value.empty())
        TESSEL_THROW(CompileError) << "target '" << spec << "': " << key << " needs a value ("
                                   << key << "=" << expected << ")";
    if (!slot->empty())
        TESSEL_THROW(CompileError) << "target '" << spec << "': " << key << " given twice";
    *slot = value;
}

// "-mattr=+a,-b" items, each "+name" or "-name".
void append_features(const std::string& spec, const std::string& list,
                     std::vector<std::string>* out) {
    std::stringstream ss(list);
    for (std::string f; std::getline(ss, f, ',');) {
        if (f.size() < 2 || (f[0] != '+' && f[0] != '-')) {
            TESSEL_THROW(CompileError) << "target '" << spec << "': bad feature '" << f
                                       << "' in -mattr (write features as +name or -name)";
        }
        out->push_back(f);
    }
}

int parse_num_cores(const std::string& spec, const std::string& value) {
    size_t used = 0;
    long n = 0;
    try {
        n = std::stol(value, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != value.size() || value.empty() || n < 1 || n > 65536) {
        TESSEL_THROW(CompileError) << "target '" << spec << "': bad -num-cores value '" << value
                                   << "' (a positive integer, e.g. -num-cores=8)";
    }
    return static_cast<int>(n);
}

int host_cores() {
    unsigned n = std::thread::hardware_concurrency();
    return n ? static_cast<int>(n) : 1;
}

void set_float_mode(const std::string& spec, TargetFloatMode mode, TargetFloatMode* slot) {
    if (*slot != TargetFloatMode::Contract && *slot != mode) {
        TESSEL_THROW(CompileError) << "target '" << spec
                                   << "': -fast-math and -strict-float contradict each other "
                                      "(give one of them, or neither for the default)";
    }
    *slot = mode;
}

// The architecture of device 0, for "cuda" without -arch.
std::string device_arch(const std::string& spec) {
    if (!cuda_available()) {
        TESSEL_THROW(CompileError) << "cuda target '" << spec << "': no GPU to take the "
                                   << "architecture from (" << cuda_unavailable_reason()
                                   << "); name one, e.g. 'cuda -arch=sm_90'";
    }
    return cuda_device_info(0).arch();
}

// Device 0's properties when it has architecture `arch` (ignoring an "a" / "f" suffix).
std::optional<CudaDeviceInfo> device_with_arch(const std::string& arch) {
    if (!cuda_available() || cuda_device_count() < 1) return std::nullopt;
    CudaDeviceInfo info = cuda_device_info(0);
    if (info.arch() != internal::gpu_base_arch(arch)) return std::nullopt;
    return info;
}

// A known architecture: one of the table's, or device 0's own.
void check_arch(const std::string& spec, const std::string& arch, bool on_device) {
    std::string base = internal::gpu_base_arch(arch);
    bool known = internal::gpu_arch_limits(arch) != nullptr || (on_device && base == arch);
    // The "a" (architecture-specific) and "f" (family) suffixes exist from sm_90 on.
    if (known && base != arch) known = std::stoi(base.substr(3)) >= 90;
    if (!known) {
        TESSEL_THROW(CompileError) << "cuda target '" << spec << "': unknown architecture '"
                                   << arch << "' (known: "
                                   << join(internal::gpu_arch_names(), ", ")
                                   << "; sm_90 and later also with an 'a' or 'f' suffix)";
    }
}

// The limits of `arch`: device 0's when it has that architecture, else the table's.
GpuLimits gpu_limits_of(const std::string& arch, const std::optional<CudaDeviceInfo>& device) {
    const GpuLimits* table = internal::gpu_arch_limits(arch);
    GpuLimits limits = table ? *table : GpuLimits{};
    if (!device) return limits;
    limits.max_threads_per_block = device->max_threads_per_block;
    limits.max_shared_memory_per_block = device->shared_bytes_per_block;
    limits.max_shared_memory_per_block_optin = device->shared_bytes_per_block_optin;
    limits.max_registers_per_block = device->registers_per_block;
    limits.warp_size = device->warp_size;
    limits.max_vthread_extent = 8;
    limits.sm_count = device->multiprocessors;
    limits.from_driver = true;
    return limits;
}

}  // namespace

const char* target_kind_name(TargetKind kind) {
    return kind == TargetKind::LLVM ? "llvm" : "cuda";
}

Target::Target(const std::string& spec) {
    std::vector<std::string> words = split_words(spec);
    if (words.empty())
        TESSEL_THROW(CompileError) << "empty target string (a target starts with its kind: llvm, "
                                      "cuda)";
    if (words[0] == "llvm") {
        parse_llvm(spec, words);
    } else if (words[0] == "cuda") {
        parse_cuda(spec, words);
    } else {
        TESSEL_THROW(CompileError)
            << "target '" << spec << "': unknown kind '" << words[0] << "' (kinds: llvm, cuda)";
    }
    make_str();
}

Target Target::host() {
    static const Target host("llvm");
    return host;
}

void Target::parse_llvm(const std::string& spec, const std::vector<std::string>& words) {
    kind_ = TargetKind::LLVM;
    std::string cpu, cores;
    std::vector<std::string> mattr;
    for (size_t i = 1; i < words.size(); ++i) {
        const std::string& w = words[i];
        std::string value;
        if (option_value(w, "-mcpu", &value)) {
            set_once(spec, "-mcpu", value, &cpu, "<cpu>");
        } else if (option_value(w, "-mattr", &value)) {
            append_features(spec, value, &mattr);
        } else if (option_value(w, "-num-cores", &value)) {
            set_once(spec, "-num-cores", value, &cores, "<n>");
        } else if (w == "-fast-math") {
            set_float_mode(spec, TargetFloatMode::Fast, &float_mode_);
        } else if (w == "-strict-float") {
            set_float_mode(spec, TargetFloatMode::Strict, &float_mode_);
        } else {
            unknown_option(spec, w, "llvm", kLLVMOptions);
        }
    }
    internal::CpuDescription d;
    if (cpu.empty()) {
        d = internal::host_cpu();  // "llvm" alone: this machine
        if (!mattr.empty()) {
            mattr.insert(mattr.begin(), d.features.begin(), d.features.end());
            d = internal::resolve_cpu(spec, d.cpu, mattr);
        }
    } else {
        d = internal::resolve_cpu(spec, cpu, mattr);
    }
    cpu_ = d.cpu;
    features_ = d.features;
    vector_bits_ = d.vector_bits;
    num_cores_ = cores.empty() ? host_cores() : parse_num_cores(spec, cores);
}

void Target::parse_cuda(const std::string& spec, const std::vector<std::string>& words) {
    kind_ = TargetKind::CUDA;
    for (size_t i = 1; i < words.size(); ++i) {
        const std::string& w = words[i];
        std::string value;
        if (option_value(w, "-arch", &value)) {
            set_once(spec, "-arch", value, &arch_, "sm_XX");
        } else if (w == "-fast-math") {
            float_mode_ = TargetFloatMode::Fast;
        } else {
            unknown_option(spec, w, "cuda", kCUDAOptions);
        }
    }
    if (arch_.empty()) arch_ = device_arch(spec);
    std::optional<CudaDeviceInfo> device = device_with_arch(arch_);
    check_arch(spec, arch_, device.has_value());
    gpu_ = gpu_limits_of(arch_, device);
}

void Target::make_str() {
    std::string s = kind_name();
    if (kind_ == TargetKind::LLVM) {
        s += " -mcpu=" + cpu_;
        if (!features_.empty()) s += " -mattr=" + feature_string();
        s += " -num-cores=" + std::to_string(num_cores_);
        if (float_mode_ == TargetFloatMode::Strict) s += " -strict-float";
    } else {
        s += " -arch=" + arch_;
    }
    if (float_mode_ == TargetFloatMode::Fast) s += " -fast-math";
    str_ = s;
}

std::string Target::feature_string() const {
    return join(features_, ",");
}

int Target::vector_lanes(Type t) const {
    int bits = std::max<int>(8, t.bits);
    int width = is_gpu() ? 128 : vector_bits_;
    return std::max(1, width / bits);
}

int Target::cache_line_bytes() const {
    return is_gpu() ? 128 : 64;
}

int Target::compute_capability() const {
    int cc = 0;
    if (arch_.rfind("sm_", 0) != 0) return 0;
    for (size_t i = 3; i < arch_.size() && std::isdigit(static_cast<unsigned char>(arch_[i])); ++i)
        cc = cc * 10 + (arch_[i] - '0');
    return cc;
}

int Target::num_cores() const {
    return is_gpu() ? gpu_.sm_count : num_cores_;
}

const GpuLimits& Target::gpu_limits() const {
    if (!is_gpu()) {
        TESSEL_THROW(CompileError) << "target '" << str_ << "' is a CPU target: its GPU limits "
                                   << "(threads per block, shared memory, registers, warp size, "
                                      "vthread extent, SM count) do not exist";
    }
    return gpu_;
}

std::vector<std::string> Target::known_cuda_archs() {
    return internal::gpu_arch_names();
}

}  // namespace tessel
