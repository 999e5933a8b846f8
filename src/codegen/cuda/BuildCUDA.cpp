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
#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/SplitHostDevice.h"
#include "tessel/lower/VerifyLowered.h"
#include "tessel/runtime/CUDA.h"
#include "tessel/runtime/CudaLaunchPlan.h"

namespace tessel::internal {

namespace {

// NVRTC's log without ptxas's report (PyTorch's NVRTC loaded first, a CUDA tool such as
// compute-sanitizer injected: docs/cuda.md): where a GPU can load the cubin, the driver's
// attributes of its functions stand in for it, in the log and in the plans' resources (registers
// and static shared memory; no local memory means no stack and no spills, while local memory
// could be either, so spills stay unknown then). Returns the lines for the log.
std::string driver_report(CudaPayload& payload) {
    if (!cuda_available())
        return "[tessel] no GPU to read them from instead: " + cuda_unavailable_reason() + "\n";
    std::vector<CudaFunctionAttributes> attrs;
    try {
        attrs = cuda_function_attributes(payload, 0);
    } catch (const RuntimeError& e) {
        return std::string("[tessel] the driver could not load the cubin to read them: ") +
               e.what() + "\n";
    }
    std::ostringstream out;
    for (const CudaFunctionAttributes& a : attrs) {
        out << "[tessel] from the driver (cuFuncGetAttribute, cuda:0), function " << a.function
            << ": " << a.registers << " registers, " << a.local_bytes
            << " bytes local memory per thread (stack frame and spills), " << a.static_shared_bytes
            << " bytes static shared memory\n";
        for (auto& [kernel, plan] : payload.plans) {
            for (CudaLaunch& l : plan.launches) {
                if (l.function != a.function) continue;
                l.resources.registers = a.registers;
                l.resources.static_shared_bytes = a.static_shared_bytes;
                if (a.local_bytes == 0) {
                    l.resources.stack_bytes = 0;
                    l.resources.spill_store_bytes = l.resources.spill_load_bytes = 0;
                }
            }
        }
    }
    return out.str();
}

}  // namespace

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
    // wgmma is an sm_90a feature: neither sm_90 nor later architectures (sm_100a has its own
    // tensor-core instructions) assemble it.
    bool wgmma = false;
    post_order_visit(f.body, [&](const IRNode* n) {
        wgmma = wgmma || (n->node_type == IRNodeType::Call &&
                          static_cast<const Call*>(n)->op == Intrinsic::wgmma);
    });
    if (wgmma && arch != "sm_90a")
        TESSEL_THROW(CompileError)
            << "cuda: '" << f.name << "' uses Hopper's warp-group mma (a wgmma tensor intrinsic), "
            << "which only sm_90a has; the target is " << arch
            << " (build for 'cuda -arch=sm_90a', which plain 'cuda' is on a Hopper GPU, or use "
               "the mma_* intrinsics)";
    std::vector<Var> shape_vars;
    KernelSignature sig = make_signature(f, options, DeviceType::CUDA, "cuda", &shape_vars);
    // Programmatic dependent launches (CudaLaunch::dependent): sm_90 and later, where asked for
    // (not yet the default: docs/cuda.md).
    const char* dependent = std::getenv("TESSEL_CUDA_DEPENDENT_LAUNCH");
    CudaCode code = codegen_cuda(
        f, shape_vars,
        {options.in_place, fast_math,
         target.compute_capability() >= 90 && dependent && std::string(dependent) == "1"});
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
    std::string log = compiled.log;
    if (compiled.resources.empty()) log += driver_report(payload);
    return Module({sig}, "cuda", encode_cuda_payload(payload),
                  {{"cu", code.source}, {"ptx", compiled.ptx}, {"nvrtc_log", log}});
}

}  // namespace tessel::internal

namespace tessel {

bool has_cuda_backend() {
    return internal::has_nvrtc();
}

}  // namespace tessel
