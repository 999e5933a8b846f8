// NVRTC: CUDA C to PTX and cubin (a minimal version for the cudagen branch; the lead's version
// with the compile cache and ptxas's resource report replaces it on merge).
#include "codegen/cuda/NVRTC.h"

#include <nvrtc.h>

#include <sstream>

#include "tessel/Error.h"

namespace tessel::internal {

bool has_nvrtc() {
    return true;
}

namespace {

// The source with line numbers, so that NVRTC's "(line N)" errors can be found.
std::string numbered(const std::string& source) {
    std::ostringstream os;
    std::istringstream in(source);
    std::string line;
    for (int i = 1; std::getline(in, line); ++i) os << i << ": " << line << "\n";
    return os.str();
}

}  // namespace

NvrtcResult nvrtc_compile(const std::string& source, const std::string& arch,
                          const std::vector<std::string>& options) {
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, source.c_str(), "tessel.cu", 0, nullptr, nullptr) !=
        NVRTC_SUCCESS)
        TESSEL_THROW(CompileError) << "nvrtc: cannot create a program";
    std::vector<std::string> opts = {"--gpu-architecture=" + arch, "-std=c++17"};
    opts.insert(opts.end(), options.begin(), options.end());
    std::vector<const char*> argv;
    for (const std::string& o : opts) argv.push_back(o.c_str());
    nvrtcResult rc = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
    NvrtcResult r;
    size_t size = 0;
    nvrtcGetProgramLogSize(prog, &size);
    r.log.resize(size);
    nvrtcGetProgramLog(prog, r.log.data());
    if (rc != NVRTC_SUCCESS) {
        nvrtcDestroyProgram(&prog);
        TESSEL_THROW(CompileError) << "nvrtc: compiling for " << arch << " failed:\n"
                                   << r.log << "\n"
                                   << numbered(source);
    }
    nvrtcGetPTXSize(prog, &size);
    r.ptx.resize(size);
    nvrtcGetPTX(prog, r.ptx.data());
    nvrtcGetCUBINSize(prog, &size);
    r.cubin.resize(size);
    nvrtcGetCUBIN(prog, reinterpret_cast<char*>(r.cubin.data()));
    nvrtcDestroyProgram(&prog);
    return r;
}

}  // namespace tessel::internal
