// Launching a CUDA kernel: interpret its launch plan (runtime/CudaLaunchPlan.h) with the call's
// shape values. Everything is evaluated and validated against the device, the loaded functions
// and TMA's requirements before anything is allocated or launched, so a launch that cannot run
// throws having queued nothing; then the workspaces are allocated, the tensor maps encoded (or
// taken from the launcher's cache) and the launches queued in order on the stream.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

#include "runtime/cuda/CudaModule.h"
#include "runtime/cuda/TensorMaps.h"
#include "tessel/Error.h"
#include "tessel/runtime/CUDA.h"

namespace tessel::internal::cuda {

namespace {

/// One launch of the plan, evaluated for this call.
struct ResolvedLaunch {
    size_t index = 0;  // in the plan
    const CudaLaunch* launch = nullptr;
    const FunctionInfo* function = nullptr;
    int64_t grid[3] = {1, 1, 1};
    int64_t block[3] = {1, 1, 1};
    int64_t dynamic_shared = 0;
    bool empty = false;  // a zero grid extent: nothing to launch
    // Per tensor map: what it is encoded from (a workspace's address is filled in once allocated)
    // and, once encoded, this call's copy, which the launch's params point at.
    std::vector<TensorMapValues> map_values;
    std::vector<EncodedTensorMap> maps;
};

/// The call's data pointers and shape values.
struct CallArguments {
    void* const* data = nullptr;
    size_t num_args = 0;
    const std::vector<int64_t>& shape_vars;
};

std::string dims(const int64_t (&d)[3]) {
    return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

/// "argument 0", or "workspace 'tmp'": a buffer index of a launch plan.
std::string buffer_name(int buffer, size_t num_args, const std::vector<CudaWorkspace>& workspaces) {
    auto i = static_cast<size_t>(buffer);
    if (i < num_args) return "argument " + std::to_string(buffer);
    return "workspace '" + workspaces.at(i - num_args).name + "'";
}

/// Whether dependent launches (CudaLaunch::dependent) overlap the launch before them:
/// TESSEL_CUDA_DEPENDENT_LAUNCH=0 launches every kernel after the one before has ended (the
/// kernels' waits then return at once).
bool dependent_launches() {
    static const bool on = [] {
        const char* v = std::getenv("TESSEL_CUDA_DEPENDENT_LAUNCH");
        return !(v && std::string(v) == "0");
    }();
    return on;
}

class LaunchChecker {
public:
    LaunchChecker(const std::string& kernel, size_t index, const CudaLaunch& l, int device)
        : kernel_(kernel),
          index_(index),
          launch_(l),
          device_(device),
          info_(cuda_device_info(device)) {}

    /// Throws RuntimeError naming the launch and what exceeds which limit.
    [[noreturn]] void fail(const std::string& what) const {
        TESSEL_THROW(RuntimeError)
            << "CUDA kernel '" << kernel_ << "', launch " << index_ << " of '" << launch_.function
            << "' (stage '" << launch_.stage << "'): " << what << " (cuda:" << device_ << ", "
            << info_.name << ")";
    }

    void check_block(const ResolvedLaunch& r) const {
        static const char* axis[3] = {"x", "y", "z"};
        for (int d = 0; d < 3; ++d) {
            if (r.block[d] < 1)
                fail("block extent " + std::string(axis[d]) + " is " + std::to_string(r.block[d]) +
                     "; it must be at least 1");
            if (r.block[d] > info_.max_block_dim[d])
                fail("block " + dims(r.block) + ": extent " + axis[d] + " " +
                     std::to_string(r.block[d]) + " exceeds the device's maximum " +
                     std::to_string(info_.max_block_dim[d]));
        }
        int64_t threads = r.block[0] * r.block[1] * r.block[2];
        if (threads > info_.max_threads_per_block)
            fail(std::to_string(threads) + " threads per block (block " + dims(r.block) +
                 ") exceed the device's maximum of " + std::to_string(info_.max_threads_per_block));
        const FunctionInfo& f = *r.function;
        if (f.registers * threads > info_.registers_per_block)
            fail(std::to_string(f.registers) + " registers per thread x " +
                 std::to_string(threads) + " threads = " + std::to_string(f.registers * threads) +
                 " registers per block exceed the device's " +
                 std::to_string(info_.registers_per_block) + "; use fewer threads per block");
        if (threads > f.max_threads)
            fail(std::to_string(threads) + " threads per block exceed the " +
                 std::to_string(f.max_threads) + " the compiled function can run (it uses " +
                 std::to_string(f.registers) + " registers per thread)");
    }

    void check_grid(ResolvedLaunch& r) const {
        static const char* axis[3] = {"x", "y", "z"};
        for (int d = 0; d < 3; ++d) {
            if (r.grid[d] < 0)
                fail("grid extent " + std::string(axis[d]) + " is negative (" +
                     std::to_string(r.grid[d]) + ")");
            if (r.grid[d] == 0) r.empty = true;
            if (r.grid[d] > info_.max_grid_dim[d])
                fail("grid " + dims(r.grid) + ": extent " + axis[d] + " " +
                     std::to_string(r.grid[d]) + " exceeds the device's maximum " +
                     std::to_string(info_.max_grid_dim[d]));
        }
    }

    /// Evaluates the launch's tensor maps into r.map_values and checks what TMA requires of them.
    void check_tensor_maps(ResolvedLaunch& r, const CallArguments& call,
                           const std::vector<CudaWorkspace>& workspaces) const {
        if (launch_.tensor_maps.empty()) return;
        std::string driver_problem = tensor_map_driver_problem();
        if (!driver_problem.empty()) fail(driver_problem);
        for (const CudaTensorMap& map : launch_.tensor_maps) {
            TensorMapValues v = evaluate(map, call.shape_vars);
            auto buffer = static_cast<size_t>(map.buffer);
            if (buffer < call.num_args)
                v.address = reinterpret_cast<uintptr_t>(call.data[buffer]);
            else if (buffer - call.num_args >= workspaces.size())
                fail("malformed launch plan (tensor map of buffer " + std::to_string(map.buffer) +
                     " out of range)");
            // A workspace is allocated later, cuMemAlloc'd at a 256-byte boundary: checked as
            // aligned here, its address filled in once allocated.
            uintptr_t address = buffer < call.num_args ? v.address : kTensorMapAlignment;
            std::string problem = tensor_map_problem(map, address, v.dims, v.strides);
            if (!problem.empty())
                fail("tensor map of " + buffer_name(map.buffer, call.num_args, workspaces) + " (" +
                     tensor_map_text(map, v.dims) + "): " + problem);
            r.map_values.push_back(std::move(v));
        }
    }

    void check_shared(const ResolvedLaunch& r) const {
        if (r.dynamic_shared < 0)
            fail("negative dynamic shared memory (" + std::to_string(r.dynamic_shared) + " bytes)");
        int64_t total = r.function->static_shared_bytes + r.dynamic_shared;
        if (total > info_.shared_bytes_per_block_optin)
            fail(std::to_string(total) + " bytes of shared memory per block (" +
                 std::to_string(r.function->static_shared_bytes) + " static + " +
                 std::to_string(r.dynamic_shared) + " dynamic) exceed the device's maximum of " +
                 std::to_string(info_.shared_bytes_per_block_optin));
    }

private:
    static TensorMapValues evaluate(const CudaTensorMap& map, const std::vector<int64_t>& vars) {
        TensorMapValues v;
        for (const LaunchExpr& e : map.dims) v.dims.push_back(e.eval(vars.data()));
        for (const LaunchExpr& e : map.strides) v.strides.push_back(e.eval(vars.data()));
        return v;
    }

    const std::string& kernel_;
    size_t index_;
    const CudaLaunch& launch_;
    int device_;
    CudaDeviceInfo info_;
};

ResolvedLaunch resolve_launch(const std::string& kernel, size_t index, const CudaLaunch& l,
                              const DeviceModule& m, const CallArguments& call,
                              const std::vector<CudaWorkspace>& workspaces) {
    const std::vector<int64_t>& shape_vars = call.shape_vars;
    ResolvedLaunch r;
    r.index = index;
    r.launch = &l;
    r.function = &m.functions.at(l.function);
    for (int d = 0; d < 3; ++d) {
        r.grid[d] = l.grid[d].eval(shape_vars.data());
        r.block[d] = l.block[d].eval(shape_vars.data());
    }
    r.dynamic_shared = l.dynamic_shared_bytes.eval(shape_vars.data());
    LaunchChecker checker(kernel, index, l, m.device);
    checker.check_grid(r);
    if (r.empty) return r;  // nothing runs: no limit applies
    checker.check_block(r);
    checker.check_shared(r);
    checker.check_tensor_maps(r, call, workspaces);
    return r;
}

/// The launcher's workspaces that are zero between calls (CudaWorkspace::zeroed): one buffer per
/// (device, stream, workspace), zeroed on the stream before its first use there and kept (the
/// kernels leave it zero), so calls on one stream, which run in order, share it and calls on two
/// streams never do. Freed with the launcher.
class ZeroedWorkspaces {
public:
    ZeroedWorkspaces() = default;
    ZeroedWorkspaces(const ZeroedWorkspaces&) = delete;
    ZeroedWorkspaces& operator=(const ZeroedWorkspaces&) = delete;
    ~ZeroedWorkspaces() {
        for (const auto& [key, block] : blocks_) {
            try {
                ContextGuard guard(std::get<0>(key));
                driver().cuMemFree_v2(block.first);
            } catch (...) {  // the device is gone: nothing to free
            }
        }
    }

    CUdeviceptr get(int device, CUstream stream, size_t workspace, int64_t bytes,
                    const std::string& what) {
        std::lock_guard lock(mu_);
        auto& block = blocks_[{device, stream, workspace}];
        if (block.first && block.second >= bytes) return block.first;
        const DriverApi& api = driver();
        if (block.first) {  // grown: the stream's kernels may still use the old one
            check(api.cuStreamSynchronize(stream), what);
            api.cuMemFree_v2(block.first);
            block = {0, 0};
        }
        check(api.cuMemAlloc_v2(&block.first, static_cast<size_t>(bytes)), what);
        block.second = bytes;
        if (api.cuMemsetD8Async) {
            check(api.cuMemsetD8Async(block.first, 0, static_cast<size_t>(bytes), stream), what);
        } else {
            check(api.cuMemsetD8_v2(block.first, 0, static_cast<size_t>(bytes)), what);
        }
        return block.first;
    }

private:
    std::mutex mu_;
    std::map<std::tuple<int, CUstream, size_t>, std::pair<CUdeviceptr, int64_t>> blocks_;
};

/// The workspaces of one call: stream-ordered allocations where the device has memory pools
/// (freed on the stream after the launches), otherwise cuMemAlloc'd and freed after a stream
/// synchronisation; the zeroed ones (ZeroedWorkspaces) kept by the launcher.
class Workspaces {
public:
    Workspaces(const DeviceModule& m, CUstream stream) : m_(m), stream_(stream) {}
    ~Workspaces() {
        // Errors are ignored: nothing better to do in a destructor (the launch's own error, if
        // any, is already on its way).
        bool any = std::any_of(pointers_.begin(), pointers_.end(), [](CUdeviceptr p) { return p; });
        if (any && !m_.memory_pools) driver().cuStreamSynchronize(stream_);
        for (CUdeviceptr p : pointers_) {
            if (p && m_.memory_pools) driver().cuMemFreeAsync(p, stream_);
            if (p && !m_.memory_pools) driver().cuMemFree_v2(p);
        }
    }
    Workspaces(const Workspaces&) = delete;
    Workspaces& operator=(const Workspaces&) = delete;

    void allocate(const std::string& label, const CudaWorkspace& w, int64_t bytes,
                  ZeroedWorkspaces& zeroed, int device) {
        if (bytes < 0) {
            TESSEL_THROW(RuntimeError)
                << label << ": workspace '" << w.name << "' has " << bytes << " bytes";
        }
        if (w.zeroed && bytes > 0) {
            pointers_.push_back(0);
            kept_.push_back(zeroed.get(device, stream_, pointers_.size() - 1, bytes,
                                       label + ": allocating zeroed workspace '" + w.name + "' (" +
                                           std::to_string(bytes) + " bytes)"));
            return;
        }
        kept_.push_back(0);
        CUdeviceptr p = 0;
        if (bytes > 0) {
            std::string what = label + ": allocating workspace '" + w.name + "' (" +
                               std::to_string(bytes) + " bytes)";
            if (m_.memory_pools)
                check(driver().cuMemAllocAsync(&p, static_cast<size_t>(bytes), stream_), what);
            else
                check(driver().cuMemAlloc_v2(&p, static_cast<size_t>(bytes)), what);
        }
        pointers_.push_back(p);
    }
    CUdeviceptr at(size_t i) const { return pointers_.at(i) ? pointers_.at(i) : kept_.at(i); }

private:
    const DeviceModule& m_;
    CUstream stream_;
    std::vector<CUdeviceptr> pointers_;  // this call's own (freed with it)
    std::vector<CUdeviceptr> kept_;      // the zeroed ones, the launcher's
};

class CudaKernelLauncher final : public KernelLauncher {
public:
    CudaKernelLauncher(std::shared_ptr<const CudaLoadedCode> code, std::string kernel)
        : code_(std::move(code)),
          kernel_(std::move(kernel)),
          plan_(code_->payload().plans.at(kernel_)) {}

    void launch(const std::vector<NDArray>& args, const std::vector<int64_t>& shape_vars,
                void* stream) const override {
        Device d = args.empty() ? Device{DeviceType::CUDA, 0} : args[0].device();
        std::vector<void*> data;
        data.reserve(args.size());
        for (const NDArray& a : args) data.push_back(a.data());
        launch_data(data.data(), data.size(), d, shape_vars, stream);
    }

    void launch_data(void* const* data, size_t num_args, Device d,
                     const std::vector<int64_t>& shape_vars, void* stream) const override {
        if (d.type != DeviceType::CUDA) {
            TESSEL_THROW(RuntimeError) << "CUDA kernel '" << kernel_ << "': its arguments are on "
                                       << d.str() << ", not on a CUDA device";
        }
        int device = d.id;
        ContextGuard guard(device);  // throws, saying why, when CUDA is unavailable
        const DeviceModule& m = code_->on_device(device);
        CallArguments call{data, num_args, shape_vars};
        std::vector<ResolvedLaunch> launches;
        for (size_t i = 0; i < plan_.launches.size(); ++i)
            launches.push_back(
                resolve_launch(kernel_, i, plan_.launches[i], m, call, plan_.workspaces));
        for (const ResolvedLaunch& r : launches) {
            if (!r.empty && r.dynamic_shared > 0)
                code_->allow_dynamic_shared(m, r.launch->function, r.dynamic_shared);
        }
        auto cu_stream = static_cast<CUstream>(stream);
        Workspaces workspaces(m, cu_stream);
        for (const CudaWorkspace& w : plan_.workspaces)
            workspaces.allocate("CUDA kernel '" + kernel_ + "'", w, w.bytes.eval(shape_vars.data()),
                                zeroed_, device);
        for (ResolvedLaunch& r : launches) {
            if (!r.empty) encode_tensor_maps(r, num_args, workspaces);
        }
        // A dependent launch (CudaLaunch::dependent) overlaps the launch before it only when that
        // one is this call's: the call's first kernel waits for the stream's earlier work as any.
        bool queued = false;
        for (ResolvedLaunch& r : launches) {
            if (r.empty) continue;
            queue(r, call, workspaces, cu_stream, queued && r.launch->dependent);
            queued = true;
        }
    }

private:
    /// Fills r.maps from the cache, encoding those whose address, dims or strides changed.
    void encode_tensor_maps(ResolvedLaunch& r, size_t num_args, const Workspaces& ws) const {
        const CudaLaunch& l = *r.launch;
        for (size_t i = 0; i < l.tensor_maps.size(); ++i) {
            const CudaTensorMap& map = l.tensor_maps[i];
            TensorMapValues& values = r.map_values[i];
            auto buffer = static_cast<size_t>(map.buffer);
            if (buffer >= num_args) values.address = ws.at(buffer - num_args);
            auto encode = [&] {
                std::string what = "CUDA kernel '" + kernel_ + "', launch " +
                                   std::to_string(r.index) + " of '" + l.function +
                                   "': tensor map of " +
                                   buffer_name(map.buffer, num_args, plan_.workspaces) + " (" +
                                   tensor_map_text(map, values.dims) + ")";
                return encode_tensor_map(map, values, what);
            };
            r.maps.push_back(tensor_maps_.get(r.index, i, values, encode));
        }
    }

    uint64_t param_value(const CudaParam& p, const CallArguments& call,
                         const Workspaces& ws) const {
        auto index = static_cast<size_t>(p.index);
        bool ok = p.index >= 0;
        if (ok && p.kind == CudaParam::Kind::ShapeVar && index < call.shape_vars.size())
            return static_cast<uint64_t>(call.shape_vars[index]);
        if (ok && p.kind == CudaParam::Kind::Buffer && index < call.num_args)
            return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(call.data[index]));
        if (ok && p.kind == CudaParam::Kind::Buffer &&
            index - call.num_args < plan_.workspaces.size())
            return ws.at(index - call.num_args);
        TESSEL_THROW(RuntimeError) << "CUDA kernel '" << kernel_ << "': malformed launch plan ("
                                   << "parameter index " << p.index << " out of range)";
    }

    void queue(ResolvedLaunch& r, const CallArguments& call, const Workspaces& ws, CUstream stream,
               bool dependent) const {
        const CudaLaunch& l = *r.launch;
        // Device pointers (CUdeviceptr) and shape values (int64_t) are both 8 bytes; a tensor
        // map parameter points at this call's copy of its encoded map (128 bytes, 64-aligned).
        std::vector<uint64_t> values(l.params.size());
        std::vector<void*> params;
        for (size_t i = 0; i < l.params.size(); ++i) {
            const CudaParam& p = l.params[i];
            bool map = p.kind == CudaParam::Kind::TensorMap;
            if (map && p.index >= 0 && static_cast<size_t>(p.index) < r.maps.size()) {
                params.push_back(&r.maps[static_cast<size_t>(p.index)]);
                continue;
            }
            values[i] = param_value(p, call, ws);
            params.push_back(&values[i]);
        }
        auto u = [](int64_t v) { return static_cast<unsigned>(v); };
        const DriverApi& api = driver();
        CUresult result = CUDA_ERROR_NOT_FOUND;
        // A dependent launch the driver refuses (a stream capture it cannot record so, say) is
        // launched as any: the kernel's wait then returns at once.
        if (dependent && api.cuLaunchKernelEx && dependent_launches()) {
            LaunchAttribute programmatic{};
            programmatic.id = kLaunchAttributeProgrammaticStreamSerialization;
            programmatic.value.programmatic_stream_serialization_allowed = 1;
            LaunchConfig config{
                u(r.grid[0]),  u(r.grid[1]),        u(r.grid[2]), u(r.block[0]), u(r.block[1]),
                u(r.block[2]), u(r.dynamic_shared), stream,       &programmatic, 1};
            result = api.cuLaunchKernelEx(&config, r.function->handle, params.data(), nullptr);
        }
        if (result != CUDA_SUCCESS) {
            result = api.cuLaunchKernel(r.function->handle, u(r.grid[0]), u(r.grid[1]),
                                        u(r.grid[2]), u(r.block[0]), u(r.block[1]), u(r.block[2]),
                                        u(r.dynamic_shared), stream, params.data(), nullptr);
        }
        if (result == CUDA_SUCCESS) return;
        check(result, "cuLaunchKernel of '" + l.function + "' (CUDA kernel '" + kernel_ +
                          "', stage '" + l.stage + "', grid " + dims(r.grid) + ", block " +
                          dims(r.block) + ", " + std::to_string(r.dynamic_shared) +
                          " bytes dynamic shared)");
    }

    std::shared_ptr<const CudaLoadedCode> code_;
    std::string kernel_;
    const CudaLaunchPlan& plan_;
    mutable TensorMapCache tensor_maps_;  // the encoded maps, shared by the calling threads
    mutable ZeroedWorkspaces zeroed_;     // tile_arrive's counters, per device and stream
};

}  // namespace

std::shared_ptr<const KernelLauncher> make_cuda_launcher(std::shared_ptr<const CudaLoadedCode> code,
                                                         const std::string& kernel) {
    return std::make_shared<CudaKernelLauncher>(std::move(code), kernel);
}

}  // namespace tessel::internal::cuda
