// NVRTC: CUDA C to cubin (and PTX on demand), ptxas's resource report, and the compile cache.
#include "codegen/cuda/NVRTC.h"

#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <regex>
#include <sstream>
#include <unordered_map>

#include "tessel/Error.h"

namespace tessel::internal {

namespace {

constexpr const char* kProgramName = "tessel_kernel.cu";

void check(nvrtcResult r, const char* what) {
    if (r != NVRTC_SUCCESS) {
        TESSEL_THROW(CompileError) << "cuda: " << what << " failed: " << nvrtcGetErrorString(r);
    }
}

// Owns an nvrtcProgram.
class Program {
public:
    explicit Program(const std::string& source) {
        check(nvrtcCreateProgram(&p_, source.c_str(), kProgramName, 0, nullptr, nullptr),
              "nvrtcCreateProgram");
    }
    ~Program() { nvrtcDestroyProgram(&p_); }
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;
    nvrtcProgram get() const { return p_; }

    std::string log() const {
        size_t n = 0;
        check(nvrtcGetProgramLogSize(p_, &n), "nvrtcGetProgramLogSize");
        std::string text(n, '\0');
        check(nvrtcGetProgramLog(p_, text.data()), "nvrtcGetProgramLog");
        while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
        return text;
    }

private:
    nvrtcProgram p_ = nullptr;
};

// The source lines NVRTC's errors point at ("tessel_kernel.cu(12): error: ..."), numbered, with
// one line of context either side.
std::string quote_error_lines(const std::string& log, const std::string& source) {
    std::vector<std::string> lines;
    std::istringstream in(source);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    std::regex where(std::string(kProgramName) + R"(\((\d+)\): error)");
    std::ostringstream out;
    size_t shown = 0;
    for (std::sregex_iterator it(log.begin(), log.end(), where), end; it != end && shown < 5;
         ++it, ++shown) {
        int line = std::stoi((*it)[1]);
        out << "\n  at line " << line << ":";
        for (int i = std::max(1, line - 1); i <= std::min<int>(lines.size(), line + 1); ++i) {
            out << "\n  " << (i == line ? ">" : " ") << i << " | " << lines[i - 1];
        }
    }
    return out.str();
}

// ptxas -v's report: "Compiling entry function 'f'", then "N bytes stack frame, N bytes spill
// stores, N bytes spill loads" and "Used N registers, ... N bytes smem".
std::map<std::string, CudaResources> parse_resources(const std::string& log) {
    std::map<std::string, CudaResources> out;
    static const std::regex entry(R"(Compiling entry function '([^']+)')");
    static const std::regex frame(
        R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
    static const std::regex used(R"(Used (\d+) registers)");
    static const std::regex smem(R"((\d+) bytes smem)");
    std::istringstream in(log);
    CudaResources* current = nullptr;
    std::smatch m;
    for (std::string line; std::getline(in, line);) {
        if (std::regex_search(line, m, entry)) {
            current = &out[m[1]];
            current->static_shared_bytes = 0;
        } else if (!current) {
            continue;
        } else if (std::regex_search(line, m, frame)) {
            current->stack_bytes = std::stoll(m[1]);
            current->spill_store_bytes = std::stoll(m[2]);
            current->spill_load_bytes = std::stoll(m[3]);
        } else if (std::regex_search(line, m, used)) {
            current->registers = std::stoi(m[1]);
            if (std::regex_search(line, m, smem)) current->static_shared_bytes = std::stoll(m[1]);
        }
    }
    return out;
}

std::vector<uint8_t> get_cubin(nvrtcProgram p) {
    size_t n = 0;
    check(nvrtcGetCUBINSize(p, &n), "nvrtcGetCUBINSize");
    std::vector<uint8_t> cubin(n);
    check(nvrtcGetCUBIN(p, reinterpret_cast<char*>(cubin.data())), "nvrtcGetCUBIN");
    return cubin;
}

std::string get_ptx(nvrtcProgram p) {
    size_t n = 0;
    if (nvrtcGetPTXSize(p, &n) != NVRTC_SUCCESS || n == 0) return "";
    std::string ptx(n, '\0');
    check(nvrtcGetPTX(p, ptx.data()), "nvrtcGetPTX");
    while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
    return ptx;
}

// Where the process's NVRTC came from. Another library may have loaded one with the same soname
// first (PyTorch's NVRTC wheel, imported before tessel), and that one is then used.
std::string nvrtc_library_path() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&nvrtcCompileProgram), &info) && info.dli_fname)
        return info.dli_fname;
    return "an unknown path";
}

// NVRTC (12.9 and later) keeps compiled programs in the CUDA compute cache on disk when a driver
// is present, and a program taken from there comes back without ptxas's report: registers and
// spills, which the tuner reads, would be unknown for every kernel compiled before, in any
// process (seen on the GPU host: a test passed once, then failed on every run). So the disk
// cache is off for the process, unless the user set CUDA_CACHE_DISABLE themselves; repeated
// compiles within a process hit tessel's own cache below. Called before the first compile.
void disable_compute_cache() {
    static std::once_flag once;
    std::call_once(once, [] { setenv("CUDA_CACHE_DISABLE", "1", /*overwrite=*/0); });
}

NvrtcResult compile_uncached(const std::string& source, const std::string& arch,
                             const std::vector<std::string>& options) {
    disable_compute_cache();
    std::vector<std::string> all = {"--gpu-architecture=" + arch, "--std=c++17",
                                    "--ptxas-options=--verbose"};
    all.insert(all.end(), options.begin(), options.end());
    std::vector<const char*> argv;
    for (const auto& o : all) argv.push_back(o.c_str());
    Program program(source);
    nvrtcResult r = nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
    NvrtcResult out;
    out.log = program.log();
    if (r != NVRTC_SUCCESS) {
        TESSEL_THROW(CompileError) << "cuda: NVRTC could not compile the generated code for "
                                   << arch << ": " << nvrtcGetErrorString(r) << "\n"
                                   << out.log << quote_error_lines(out.log, source);
    }
    out.cubin = get_cubin(program.get());
    out.ptx = get_ptx(program.get());
    out.resources = parse_resources(out.log);
    if (out.resources.empty()) {
        // Seen on the GPU host with PyTorch's NVRTC wheel (same version, same cubin) and with
        // the toolkit's NVRTC under compute-sanitizer's racecheck.
        out.log +=
            "[tessel] NVRTC's log has no ptxas report, so registers and spills are unknown "
            "(-1). NVRTC was loaded from " +
            nvrtc_library_path() +
            "; if another library (PyTorch) loaded its own NVRTC first, import tessel "
            "before it.\n";
    }
    return out;
}

// Compiled results by (arch, options, source). Kernels are rebuilt often (tuning, tests), and an
// NVRTC compile costs tens of milliseconds.
struct Cache {
    std::mutex mutex;
    std::unordered_map<std::string, NvrtcResult> entries;
};

Cache& cache() {
    static Cache c;
    return c;
}

}  // namespace

bool has_nvrtc() {
    return true;
}

NvrtcResult nvrtc_compile(const std::string& source, const std::string& arch,
                          const std::vector<std::string>& options) {
    std::string key = arch + '\n';
    for (const auto& o : options) key += o + '\n';
    key += source;
    Cache& c = cache();
    {
        std::lock_guard<std::mutex> lock(c.mutex);
        auto it = c.entries.find(key);
        if (it != c.entries.end()) return it->second;
    }
    NvrtcResult result = compile_uncached(source, arch, options);
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.entries.size() >= 512) c.entries.clear();  // a bound, not an LRU: tuning runs are long
    c.entries.emplace(std::move(key), result);
    return result;
}

}  // namespace tessel::internal
