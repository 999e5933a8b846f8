// The runtime side of CUDA modules (payload format "cuda", runtime/CudaLaunchPlan.h): the built-in
// payload loader, and the loaded code, which loads the cubin onto a device at the first launch
// there. Launching a kernel (interpreting its plan) is in CudaLaunch.cpp.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/cuda/CudaDriver.h"
#include "tessel/runtime/CudaLaunchPlan.h"
#include "tessel/runtime/Module.h"

namespace tessel::internal {

/// The built-in loader of "cuda" payloads: decodes the payload (RuntimeError when it is corrupt);
/// needs no GPU.
PayloadLoader cuda_payload_loader();

namespace cuda {

/// A __global__ function of a cubin loaded on one device, with what the driver reports of it.
struct FunctionInfo {
    CUfunction handle = nullptr;
    int registers = 0;            ///< CU_FUNC_ATTRIBUTE_NUM_REGS
    int max_threads = 0;          ///< CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
    int static_shared_bytes = 0;  ///< CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
    int local_bytes = 0;          ///< CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES (per thread)
    /// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as last set; guarded by the code's mutex.
    int max_dynamic_shared_bytes = 0;
};

/// A payload's cubin loaded on one device (in its primary context).
struct DeviceModule {
    int device = 0;
    CUmodule module = nullptr;
    std::map<std::string, FunctionInfo> functions;  ///< every function the plans launch
    bool memory_pools = false;  ///< cuMemAllocAsync usable for workspaces
};

/// The code of a CUDA module: the decoded payload, and the cubin per device once loaded there.
class CudaLoadedCode final : public LoadedCode,
                             public std::enable_shared_from_this<CudaLoadedCode> {
public:
    explicit CudaLoadedCode(CudaPayload payload) : payload_(std::move(payload)) {}
    ~CudaLoadedCode() override;

    /// Null: CUDA kernels have no C entry point.
    KernelEntry lookup(const std::string&) const override { return nullptr; }
    /// The launcher of tessel kernel `name`; null when the payload has no plan for it.
    std::shared_ptr<const KernelLauncher> launcher(const std::string& name) const override;

    const CudaPayload& payload() const { return payload_; }
    /// The cubin loaded on device `id`, loading it at the first call (thread-safe). Throws
    /// RuntimeError when CUDA is unavailable or the cubin does not load there.
    const DeviceModule& on_device(int id) const;
    /// Raises `f`'s dynamic shared memory limit to at least `bytes` (thread-safe).
    void allow_dynamic_shared(const DeviceModule& m, const std::string& function,
                              int64_t bytes) const;

private:
    CudaPayload payload_;
    mutable std::mutex mutex_;
    mutable std::map<int, std::unique_ptr<DeviceModule>> devices_;
};

/// The launcher of tessel kernel `kernel` of `code` (CudaLaunch.cpp).
std::shared_ptr<const KernelLauncher> make_cuda_launcher(std::shared_ptr<const CudaLoadedCode> code,
                                                         const std::string& kernel);

}  // namespace cuda
}  // namespace tessel::internal
