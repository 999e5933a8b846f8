// The CUDA backend's build: CUDA C generation, NVRTC, and a Module whose payload is the cubin plus
// the launch plan (runtime/CudaLaunchPlan.h).
#include <iostream>

#include "codegen/Backends.h"
#include "codegen/Signature.h"
#include "codegen/cuda/CodeGenCUDA.h"
#include "codegen/cuda/NVRTC.h"
#include "tessel/Error.h"
#include "tessel/lower/SplitHostDevice.h"
#include "tessel/lower/VerifyLowered.h"

namespace tessel::internal {

void check_cuda_backend(const Target&) {
    if (!has_nvrtc()) nvrtc_compile("", "", {});  // throws the "built without CUDA" error
}

Module build_cuda(const LoweredFunc& lowered, const Target& target, const BuildOptions& options) {
    check_cuda_backend(target);
    const std::string& arch = target.arch();
    bool fast_math = target.float_mode() == TargetFloatMode::Fast;
    // A function lowered without the GPU target is split here; lower() for it does it itself.
    LoweredFunc f = is_host_device_split(lowered) ? lowered : split_host_device(lowered, target);
    verify_lowered(f);
    std::vector<Var> shape_vars;
    KernelSignature sig = make_signature(f, options, DeviceType::CUDA, "cuda", &shape_vars);
    CudaCode code = codegen_cuda(f, shape_vars, {options.in_place, fast_math});
    for (size_t i = 0; i < sig.args.size(); ++i) sig.args[i].alignment = code.arg_alignment[i];
    if (options.lower.debug >= 3) std::cerr << code.source;
    std::vector<std::string> nvrtc_options;
    if (fast_math) nvrtc_options.push_back("--use_fast_math");
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
