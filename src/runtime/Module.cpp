// Modules, kernels and the payload-loader registry.
#include "tessel/runtime/Module.h"

#include <mutex>
#include <set>
#include <utility>

#include "runtime/CpuObjectLoader.h"
#include "runtime/cuda/CudaModule.h"
#include "tessel/Error.h"

namespace tessel {

struct Module::State {
    std::vector<KernelSignature> kernels;
    std::string payload_format;
    std::vector<uint8_t> payload;
    mutable std::map<std::string, std::string> sources;
    mutable std::map<std::string, SourceGenerator> lazy_sources;  // generated once, then moved
    mutable std::mutex sources_mutex;
    std::shared_ptr<const LoadedCode> code;
    std::vector<KernelEntry> entries;  // parallel to `kernels`; null where a launcher runs it
    std::vector<std::shared_ptr<const KernelLauncher>> launchers;  // parallel to `kernels`
};

namespace internal {
namespace {

struct LoaderRegistry {
    std::mutex mutex;
    // Built-in loaders, wired here rather than registered by static initialisers (which a static
    // library drops).
    std::map<std::string, PayloadLoader> loaders{{"cuda", cuda_payload_loader()},
                                                 {kCpuObjectFormat, cpu_object_payload_loader()}};
};

LoaderRegistry& loader_registry() {
    static LoaderRegistry r;
    return r;
}

PayloadLoader find_loader(const std::string& format) {
    auto& r = loader_registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.loaders.find(format);
    if (it == r.loaders.end()) {
        TESSEL_THROW(RuntimeError) << "no loader for module payload format '" << format
                                   << "' in this process (is its backend built and loaded?)";
    }
    return it->second;
}

}  // namespace
}  // namespace internal

void register_payload_loader(const std::string& format, PayloadLoader loader) {
    auto& r = internal::loader_registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.loaders[format] = std::move(loader);
}

Kernel::Kernel(KernelSignature signature, KernelEntry entry, std::shared_ptr<const void> code_owner)
    : signature_(std::move(signature)), entry_(entry), code_owner_(std::move(code_owner)) {}

Kernel::Kernel(KernelSignature signature, std::shared_ptr<const KernelLauncher> launcher,
               std::shared_ptr<const void> code_owner)
    : signature_(std::move(signature)),
      launcher_(std::move(launcher)),
      code_owner_(std::move(code_owner)) {}

namespace {

// The message of the last failed check inside a kernel (tessel_report_kernel_error). Shared by
// all threads: a check may fail on a worker thread of a parallel loop.
std::mutex kernel_error_mutex;
std::string kernel_error;

std::string take_kernel_error() {
    std::lock_guard<std::mutex> lock(kernel_error_mutex);
    return std::exchange(kernel_error, std::string());
}

}  // namespace

void Kernel::launch(const std::vector<NDArray>& args, void* stream) const {
    if (!entry_ && !launcher_) TESSEL_THROW(RuntimeError) << "call of an empty Kernel";
    std::vector<int64_t> shape_vars = check_arguments(signature_, args);
    if (!entry_) {
        launcher_->launch(args, shape_vars, stream);
        return;
    }
    std::vector<void*> pointers;
    pointers.reserve(args.size());
    for (const NDArray& a : args) pointers.push_back(a.data());
    int32_t status = entry_(pointers.data(), shape_vars.data());
    if (status != 0) {
        std::string message = take_kernel_error();
        TESSEL_THROW(RuntimeError) << "kernel '" << signature_.name << "' failed with status "
                                   << status << (message.empty() ? "" : ": ") << message;
    }
}

void Kernel::launch_checked(void* const* data, Device device,
                            const std::vector<int64_t>& shape_vars, void* stream) const {
    if (!entry_ && !launcher_) TESSEL_THROW(RuntimeError) << "call of an empty Kernel";
    if (!entry_) {
        launcher_->launch_data(data, signature_.args.size(), device, shape_vars, stream);
        return;
    }
    int32_t status = entry_(const_cast<void**>(data), shape_vars.data());
    if (status != 0) {
        std::string message = take_kernel_error();
        TESSEL_THROW(RuntimeError) << "kernel '" << signature_.name << "' failed with status "
                                   << status << (message.empty() ? "" : ": ") << message;
    }
}

Module::Module(std::vector<KernelSignature> kernels, std::string payload_format,
               std::vector<uint8_t> payload, std::map<std::string, std::string> sources)
    : Module(std::move(kernels), std::move(payload_format), std::move(payload), nullptr,
             std::move(sources), {}) {}

Module::Module(std::vector<KernelSignature> kernels, std::string payload_format,
               std::vector<uint8_t> payload, std::shared_ptr<const LoadedCode> code,
               std::map<std::string, std::string> sources,
               std::map<std::string, SourceGenerator> lazy_sources) {
    auto state = std::make_shared<State>();
    std::set<std::string> names;
    for (const auto& k : kernels) {
        if (!names.insert(k.name).second) {
            TESSEL_THROW(RuntimeError) << "module has two kernels named '" << k.name << "'";
        }
    }
    state->code = code ? std::move(code) : internal::find_loader(payload_format)(payload);
    if (!state->code) {
        TESSEL_THROW(RuntimeError) << "loader of '" << payload_format << "' returned no code";
    }
    for (const auto& k : kernels) {
        KernelEntry entry = state->code->lookup(k.name);
        std::shared_ptr<const KernelLauncher> launcher;
        if (!entry) launcher = state->code->launcher(k.name);
        if (!entry && !launcher) {
            TESSEL_THROW(RuntimeError) << "module payload (" << payload_format
                                       << ") has no entry point for kernel '" << k.name << "'";
        }
        state->entries.push_back(entry);
        state->launchers.push_back(std::move(launcher));
    }
    state->kernels = std::move(kernels);
    state->payload_format = std::move(payload_format);
    state->payload = std::move(payload);
    state->sources = std::move(sources);
    state->lazy_sources = std::move(lazy_sources);
    state_ = std::move(state);
}

const Module::State& Module::state() const {
    static const State empty_state;
    return state_ ? *state_ : empty_state;
}

Kernel Module::get(const std::string& name) const {
    const State& s = state();
    for (size_t i = 0; i < s.kernels.size(); ++i) {
        if (s.kernels[i].name != name) continue;
        if (s.entries[i]) return Kernel(s.kernels[i], s.entries[i], state_);
        return Kernel(s.kernels[i], s.launchers[i], state_);
    }
    std::string available;
    for (const auto& k : s.kernels) available += (available.empty() ? "'" : ", '") + k.name + "'";
    TESSEL_THROW(RuntimeError) << "module has no kernel '" << name
                               << "' (it has: " << (available.empty() ? "none" : available) << ")";
}

std::vector<std::string> Module::kernel_names() const {
    std::vector<std::string> names;
    for (const auto& k : state().kernels) names.push_back(k.name);
    return names;
}

const std::vector<KernelSignature>& Module::signatures() const {
    return state().kernels;
}
const std::map<std::string, std::string>& Module::sources() const {
    const State& s = state();
    std::lock_guard<std::mutex> lock(s.sources_mutex);
    for (auto& [kind, generate] : s.lazy_sources) s.sources[kind] = generate();
    s.lazy_sources.clear();
    return s.sources;
}
const std::string& Module::payload_format() const {
    return state().payload_format;
}
const std::vector<uint8_t>& Module::payload() const {
    return state().payload;
}

const std::string& Module::get_source(const std::string& kind) const {
    const State& s = state();
    std::lock_guard<std::mutex> lock(s.sources_mutex);
    auto lazy = s.lazy_sources.find(kind);
    if (lazy != s.lazy_sources.end()) {
        s.sources[kind] = lazy->second();
        s.lazy_sources.erase(lazy);
    }
    auto it = s.sources.find(kind);
    if (it == s.sources.end()) {
        TESSEL_THROW(RuntimeError) << "module has no '" << kind << "' source";
    }
    return it->second;
}

}  // namespace tessel

extern "C" void tessel_report_kernel_error(const char* message) {
    std::lock_guard<std::mutex> lock(tessel::kernel_error_mutex);
    if (tessel::kernel_error.empty()) tessel::kernel_error = message ? message : "";
}
