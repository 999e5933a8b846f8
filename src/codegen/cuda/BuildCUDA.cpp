// The CUDA backend's build: CUDA C generation, NVRTC, and a Module whose payload is the cubin plus
// the launch plan (runtime/CudaLaunchPlan.h).
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "codegen/Backends.h"
#include "codegen/Signature.h"
#include "codegen/cuda/CodeGenCUDA.h"
#include "codegen/cuda/NVRTC.h"
#include "tessel/Error.h"
#include "tessel/lower/VerifyLowered.h"
#include "tessel/runtime/CUDA.h"

namespace tessel::internal {

namespace {

struct CudaTarget {
    std::string arch;  // "sm_90"; empty: the GPU's
    bool fast_math = false;
};

CudaTarget parse_cuda_target(const std::string& target) {
    std::istringstream words(target);
    std::string word;
    words >> word;  // "cuda"
    CudaTarget t;
    while (words >> word) {
        if (word.rfind("-arch=", 0) == 0) {
            t.arch = word.substr(6);
            // sm_ followed by two or more digits, optionally an architecture suffix (sm_90a).
            std::string digits = t.arch.rfind("sm_", 0) == 0 ? t.arch.substr(3) : "";
            if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f'))
                digits.pop_back();
            if (digits.size() < 2 || digits.find_first_not_of("0123456789") != std::string::npos) {
                TESSEL_THROW(CompileError) << "cuda target '" << target << "': bad architecture '"
                                           << t.arch << "' (expected e.g. -arch=sm_90)";
            }
        } else if (word == "-fast-math") {
            t.fast_math = true;
        } else {
            TESSEL_THROW(CompileError) << "cuda target '" << target << "': unknown option '" << word
                                       << "' (options: -arch=sm_XX, -fast-math)";
        }
    }
    if (!has_nvrtc()) nvrtc_compile("", "", {});  // throws the "built without CUDA" error
    return t;
}

// The architecture to compile for: the target's, else device 0's.
std::string resolve_arch(const CudaTarget& t, const std::string& target) {
    if (!t.arch.empty()) return t.arch;
    if (!cuda_available()) {
        TESSEL_THROW(CompileError) << "cuda target '" << target << "': no GPU to take the "
                                   << "architecture from (" << cuda_unavailable_reason()
                                   << "); name one, e.g. 'cuda -arch=sm_90'";
    }
    return cuda_device_info(0).arch();
}

}  // namespace

void check_cuda_target(const std::string& target) {
    parse_cuda_target(target);
}

Module build_cuda(const LoweredFunc& f, const std::string& target, const BuildOptions& options) {
    CudaTarget t = parse_cuda_target(target);
    std::string arch = resolve_arch(t, target);
    verify_lowered(f);
    std::vector<Var> shape_vars;
    KernelSignature sig = make_signature(f, options, DeviceType::CUDA, "cuda", &shape_vars);
    CudaCode code = codegen_cuda(f, shape_vars, {options.in_place, t.fast_math});
    for (size_t i = 0; i < sig.args.size(); ++i) sig.args[i].alignment = code.arg_alignment[i];
    const char* debug = std::getenv("TESSEL_DEBUG");
    if (debug && std::atoi(debug) >= 3) std::cerr << code.source;
    std::vector<std::string> nvrtc_options;
    if (t.fast_math) nvrtc_options.push_back("--use_fast_math");
    NvrtcResult compiled = nvrtc_compile(code.source, arch, nvrtc_options);
    for (CudaLaunch& launch : code.plan.launches) {
        auto it = compiled.resources.find(launch.function);
        if (it != compiled.resources.end()) launch.resources = it->second;
    }
    CudaPayload payload{arch, {{f.name, code.plan}}, compiled.cubin};
    return Module({sig}, "cuda", encode_cuda_payload(payload),
                  {{"cu", code.source}, {"ptx", compiled.ptx}, {"nvrtc_log", compiled.log}});
}

}  // namespace tessel::internal

namespace tessel {

bool has_cuda_backend() {
    return internal::has_nvrtc();
}

}  // namespace tessel
