// CUDA module code: the payload loader and the lazy, per-device loading of the cubin.
#include "runtime/cuda/CudaModule.h"

#include "tessel/Error.h"
#include "tessel/runtime/CUDA.h"

namespace tessel::internal {

PayloadLoader cuda_payload_loader() {
    return [](const std::vector<uint8_t>& bytes) -> std::shared_ptr<const LoadedCode> {
        return std::make_shared<cuda::CudaLoadedCode>(decode_cuda_payload(bytes));
    };
}

namespace cuda {

namespace {

int function_attribute(CUfunction f, FunctionAttribute a, const std::string& name) {
    int value = 0;
    check(driver().cuFuncGetAttribute(&value, a, f),
          "cuFuncGetAttribute(" + std::to_string(static_cast<int>(a)) + ") of '" + name + "'");
    return value;
}

FunctionInfo load_function(CUmodule module, const std::string& name) {
    FunctionInfo f;
    CUresult r = driver().cuModuleGetFunction(&f.handle, module, name.c_str());
    if (r == CUDA_ERROR_NOT_FOUND) {
        TESSEL_THROW(RuntimeError)
            << "CUDA module: the cubin has no function '" << name << "' that the launch plan names";
    }
    check(r, "cuModuleGetFunction('" + name + "')");
    f.registers = function_attribute(f.handle, kFuncNumRegs, name);
    f.max_threads = function_attribute(f.handle, kFuncMaxThreadsPerBlock, name);
    f.static_shared_bytes = function_attribute(f.handle, kFuncSharedSizeBytes, name);
    f.local_bytes = function_attribute(f.handle, kFuncLocalSizeBytes, name);
    f.max_dynamic_shared_bytes = function_attribute(f.handle, kFuncMaxDynamicSharedBytes, name);
    return f;
}

CUmodule load_cubin(const CudaPayload& payload, int id) {
    CUmodule module = nullptr;
    CUresult r = driver().cuModuleLoadData(&module, payload.cubin.data());
    if (r != CUDA_SUCCESS) {
        TESSEL_THROW(RuntimeError)
            << "cuModuleLoadData failed: " << error_text(r) << " (a cubin for " << payload.arch
            << " on cuda:" << id << ", a " << cuda_device_info(id).arch() << " device)";
    }
    return module;
}

std::unique_ptr<DeviceModule> load_on_device(const CudaPayload& payload, int id) {
    ContextGuard guard(id);
    auto m = std::make_unique<DeviceModule>();
    m->device = id;
    m->module = load_cubin(payload, id);
    try {
        for (const auto& [kernel, plan] : payload.plans) {
            for (const CudaLaunch& l : plan.launches) {
                if (!m->functions.count(l.function))
                    m->functions.emplace(l.function, load_function(m->module, l.function));
            }
        }
    } catch (...) {
        driver().cuModuleUnload(m->module);
        throw;
    }
    m->memory_pools = driver().cuMemAllocAsync && device_attribute(id, kMemoryPoolsSupported);
    return m;
}

}  // namespace

CudaLoadedCode::~CudaLoadedCode() {
    if (!driver_or_null()) return;
    for (auto& [id, m] : devices_) {
        try {
            ContextGuard guard(id);
            driver().cuModuleUnload(m->module);  // fails harmlessly when the driver shuts down
        } catch (const std::exception&) {
        }
    }
}

std::shared_ptr<const KernelLauncher> CudaLoadedCode::launcher(const std::string& name) const {
    if (!payload_.plans.count(name)) return nullptr;
    return make_cuda_launcher(shared_from_this(), name);
}

const DeviceModule& CudaLoadedCode::on_device(int id) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = devices_.find(id);
    if (it != devices_.end()) return *it->second;
    // Loaded under the lock: a second thread launching on the same device waits for this load.
    std::unique_ptr<DeviceModule> m = load_on_device(payload_, id);
    return *devices_.emplace(id, std::move(m)).first->second;
}

void CudaLoadedCode::allow_dynamic_shared(const DeviceModule& m, const std::string& function,
                                          int64_t bytes) const {
    std::lock_guard<std::mutex> lock(mutex_);
    FunctionInfo& f = const_cast<DeviceModule&>(m).functions.at(function);
    if (bytes <= f.max_dynamic_shared_bytes) return;
    // The most the function may ever ask for, so that concurrent launches never lower it.
    int64_t most = cuda_device_info(m.device).shared_bytes_per_block_optin - f.static_shared_bytes;
    ContextGuard guard(m.device);
    check(driver().cuFuncSetAttribute(f.handle, kFuncMaxDynamicSharedBytes, static_cast<int>(most)),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES = " + std::to_string(most) + ") of '" +
              function + "'");
    f.max_dynamic_shared_bytes = static_cast<int>(most);
}

}  // namespace cuda
}  // namespace tessel::internal

namespace tessel {

std::vector<CudaFunctionAttributes> cuda_function_attributes(const CudaPayload& payload, int id) {
    auto code = std::make_shared<internal::cuda::CudaLoadedCode>(payload);
    const internal::cuda::DeviceModule& m = code->on_device(id);  // unloaded with `code`
    std::vector<CudaFunctionAttributes> out;
    for (const auto& [name, f] : m.functions)
        out.push_back({name, f.registers, f.local_bytes, f.static_shared_bytes});
    return out;
}

}  // namespace tessel
