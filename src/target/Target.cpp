// Target: parsing a target string once, its canonical string, and the queries of the search.
#include "tessel/Target.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <sstream>
#include <thread>

#include "target/CpuCaches.h"
#include "target/CpuFeatures.h"
#include "target/GpuArchTable.h"
#include "tessel/Error.h"
#include "tessel/runtime/CUDA.h"

namespace tessel {

namespace {

const char* const kLLVMOptions =
    "-mcpu=<cpu>, -mattr=+feature,-feature,..., -num-cores=<n>, -l1d=<size>, -l2=<size>, "
    "-l3=<size>, -fast-math, -strict-float";
const char* const kCUDAOptions = "-arch=sm_XX, -num-cores=<n>, -fast-math";

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

// The value of a -l1d / -l2 / -l3 option: bytes, or with a K, M or G suffix.
int64_t parse_cache_option(const std::string& spec, const char* key, const std::string& value) {
    int64_t bytes = internal::parse_cache_size(value);
    if (bytes < 1) {
        TESSEL_THROW(CompileError)
            << "target '" << spec << "': bad " << key << " value '" << value
            << "' (a size in bytes, or with a K, M or G suffix, e.g. " << key << "=48K)";
    }
    return bytes;
}

std::string binary_size(int64_t bytes) {
    std::string s = internal::format_cache_size(bytes);
    char unit = s.back();
    if (unit == 'K' || unit == 'M' || unit == 'G')
        return s.substr(0, s.size() - 1) + " " + unit + "iB";
    return s + " B";
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

// The architecture of device 0, for "cuda" without -arch: a compute-capability-9.0 device gets
// sm_90a (its warp-group tensor cores, wgmma, are an architecture-specific feature), so users get
// the Hopper path without asking; an explicit sm_90 keeps the portable mma.sync path.
std::string device_arch(const std::string& spec) {
    if (!cuda_available()) {
        TESSEL_THROW(CompileError) << "cuda target '" << spec << "': no GPU to take the "
                                   << "architecture from (" << cuda_unavailable_reason()
                                   << "); name one, e.g. 'cuda -arch=sm_90'";
    }
    const std::string arch = cuda_device_info(0).arch();
    return arch == "sm_90" ? "sm_90a" : arch;
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
        TESSEL_THROW(CompileError) << "cuda target '" << spec << "': unknown architecture '" << arch
                                   << "' (known: " << join(internal::gpu_arch_names(), ", ")
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
    std::string caches[3];  // -l1d, -l2, -l3 as given
    const char* const cache_keys[3] = {"-l1d", "-l2", "-l3"};
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
        } else if (option_value(w, "-l1d", &value)) {
            set_once(spec, "-l1d", value, &caches[0], "<size>");
        } else if (option_value(w, "-l2", &value)) {
            set_once(spec, "-l2", value, &caches[1], "<size>");
        } else if (option_value(w, "-l3", &value)) {
            set_once(spec, "-l3", value, &caches[2], "<size>");
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
    // The cache sizes: the host's, each replaced by the spec's where it gives one.
    const internal::CpuCaches& host = internal::host_caches();
    int64_t* const sizes[3] = {&l1d_, &l2_, &l3_};
    const int64_t host_sizes[3] = {host.l1d, host.l2, host.l3};
    int given = 0;
    int64_t previous = 0;  // the last size given, which a later level's must not be below
    for (int i = 0; i < 3; ++i) {
        *sizes[i] = host_sizes[i];
        if (caches[i].empty()) continue;
        *sizes[i] = parse_cache_option(spec, cache_keys[i], caches[i]);
        if (*sizes[i] < previous) {
            TESSEL_THROW(CompileError) << "target '" << spec << "': " << cache_keys[i] << "="
                                       << caches[i] << " is smaller than a cache level above it "
                                       << "(the caches grow with the level)";
        }
        previous = *sizes[i];
        caches_given_ +=
            std::string(" ") + cache_keys[i] + "=" + internal::format_cache_size(*sizes[i]);
        ++given;
    }
    caches_source_ = given == 3   ? std::string("target string")
                     : given == 0 ? host.source
                                  : "target string and " + host.source;
}

void Target::parse_cuda(const std::string& spec, const std::vector<std::string>& words) {
    kind_ = TargetKind::CUDA;
    std::string sms;
    for (size_t i = 1; i < words.size(); ++i) {
        const std::string& w = words[i];
        std::string value;
        if (option_value(w, "-arch", &value)) {
            set_once(spec, "-arch", value, &arch_, "sm_XX");
        } else if (option_value(w, "-num-cores", &value)) {
            set_once(spec, "-num-cores", value, &sms, "<n>");
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
    // -num-cores: a GPU of the architecture with another SM count (an H100 PCIe's 114 against
    // the table's 132 for sm_90); 0 in num_cores_ keeps the canonical string without it.
    num_cores_ = 0;
    if (!sms.empty()) gpu_.sm_count = num_cores_ = parse_num_cores(spec, sms);
}

void Target::make_str() {
    std::string s = kind_name();
    if (kind_ == TargetKind::LLVM) {
        s += " -mcpu=" + cpu_;
        if (!features_.empty()) s += " -mattr=" + feature_string();
        s += " -num-cores=" + std::to_string(num_cores_);
        s += caches_given_;
        if (float_mode_ == TargetFloatMode::Strict) s += " -strict-float";
    } else {
        s += " -arch=" + arch_;
        if (num_cores_ > 0) s += " -num-cores=" + std::to_string(num_cores_);
    }
    if (float_mode_ == TargetFloatMode::Fast) s += " -fast-math";
    str_ = s;
}

bool Target::has_feature(const std::string& name) const {
    if (is_gpu()) return false;
    return internal::enabled_cpu_features(cpu_, features_).count(name) != 0;
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

std::string Target::describe() const {
    std::ostringstream out;
    if (is_gpu()) {
        out << arch_ << ": " << gpu_.sm_count << " SMs, "
            << binary_size(gpu_.max_shared_memory_per_block_optin) << " shared memory per block ("
            << (gpu_.from_driver ? "driver" : "table") << ")";
        return out.str();
    }
    out << num_cores_ << (num_cores_ == 1 ? " core, " : " cores, ");
    if (vector_bits_ > 0)
        out << vector_bits_ << "-bit vectors";
    else
        out << "no vectors";
    out << ", L1d " << binary_size(l1d_) << ", L2 " << binary_size(l2_) << ", L3 "
        << binary_size(l3_) << " (caches from " << caches_source_ << ")";
    return out.str();
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
