// Hand-made CUDA kernels and launch plans for the runtime's CUDA tests: the plans a generated
// module would carry, for kernels written by hand (tests/cuda compiles them with NVRTC).
#pragma once

#include <string>

#include "tessel/runtime/CudaLaunchPlan.h"
#include "tessel/runtime/KernelSignature.h"

namespace tessel::test {

/// (a + k - 1) // k over shape variable 0.
inline LaunchExpr ceil_div_n(int64_t k) {
    using Op = LaunchExpr::Op;
    return LaunchExpr{{{Op::ShapeVar, 0}, {Op::Const, k - 1}, {Op::Add, 0}, {Op::Const, k},
                       {Op::FloorDiv, 0}}};
}

/// C[i] = A[i] + B[i] for i < n, float32[n] each.
inline const char* kAddSource = R"(
extern "C" __global__ void add(const float* a, const float* b, float* c, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
)";

/// The signature of the add kernel on CUDA: (A, B, C) of float32[n].
inline KernelSignature cuda_add_signature(const std::string& name = "vadd") {
    KernelSignature sig{name, DeviceType::CUDA, {}};
    sig.args.push_back({"A", float32(), {Dim("n")}, ArgAccess::Read});
    sig.args.push_back({"B", float32(), {Dim("n")}, ArgAccess::Read});
    sig.args.push_back({"C", float32(), {Dim("n")}, ArgAccess::Write});
    return sig;
}

/// One launch of `function` over n elements in blocks of `threads`, with (A, B, C, n).
inline CudaLaunch add_launch(const std::string& function = "add", int64_t threads = 128) {
    CudaLaunch l;
    l.function = function;
    l.stage = "C";
    l.grid = {ceil_div_n(threads), LaunchExpr::constant(1), LaunchExpr::constant(1)};
    l.block = {LaunchExpr::constant(threads), LaunchExpr::constant(1), LaunchExpr::constant(1)};
    l.params = {{CudaParam::Kind::Buffer, 0},
                {CudaParam::Kind::Buffer, 1},
                {CudaParam::Kind::Buffer, 2},
                {CudaParam::Kind::ShapeVar, 0}};
    return l;
}

/// A payload with the add plan for kernel `name` and `cubin` (any bytes where no GPU loads it).
inline CudaPayload add_payload(std::vector<uint8_t> cubin, const std::string& name = "vadd") {
    CudaPayload p;
    p.arch = "sm_90";
    p.plans[name].launches.push_back(add_launch());
    p.cubin = std::move(cubin);
    return p;
}

}  // namespace tessel::test
