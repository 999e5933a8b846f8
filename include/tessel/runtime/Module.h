// Module: the named kernels of one compiled program, and their serialised form.
//
// A module is a list of kernel signatures plus one payload blob in a named format: object code
// from the LLVM backend ("cpu-object": a relocatable ELF object; "llvm-ir" where the runtime cannot
// link objects of the machine), a cubin from the CUDA backend ("cuda"). A payload loader registered
// for the format turns the blob into callable entry points. Two loaders are built in and need
// neither LLVM nor a GPU: "cpu-object" (the runtime links the object into memory itself, x86-64
// Linux; docs/runtime.md) and "cuda" (CudaLaunchPlan.h; the cubin is loaded onto a device at the
// first launch there). "llvm-ir" needs the LLVM backend's loader (register_llvm_payload_loader).
// A process linked with libtessel_runtime alone therefore loads saved CPU modules. save() writes
// signatures, payload and sources to bytes; load() reads them back in any process (the tuner's
// measurement workers start fresh).
//
// Byte format (version 1): the 8 bytes "TSLMODUL", a little-endian uint32 version, a uint64
// length and that many bytes of JSON (kernels, payload format, sources), a uint64 length and that
// many bytes of payload, and nothing after. A corrupt or truncated string throws RuntimeError.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessel/runtime/Kernel.h"
#include "tessel/runtime/KernelSignature.h"

namespace tessel {

/// Code loaded from a module payload: finds kernels' entry points (or launchers), keeps the code
/// mapped while it lives.
class LoadedCode {
public:
    virtual ~LoadedCode() = default;
    /// The entry point of kernel `name`, or null if the code has none.
    virtual KernelEntry lookup(const std::string& name) const = 0;
    /// The launcher of kernel `name` for code whose kernels are not C entry points (lookup()
    /// returns null for them); null if the code has none. The launcher may keep the code alive.
    virtual std::shared_ptr<const KernelLauncher> launcher(const std::string&) const {
        return nullptr;
    }
};

/// Turns a payload blob into loaded code; throws RuntimeError on a payload it cannot load.
using PayloadLoader =
    std::function<std::shared_ptr<const LoadedCode>(const std::vector<uint8_t>& payload)>;

/// Produces a source text on demand (e.g. assembly, which costs a code generation).
using SourceGenerator = std::function<std::string()>;

/// Registers `loader` for payloads of `format` (replacing any earlier one, the built-in "cuda"
/// loader included). Thread-safe.
void register_payload_loader(const std::string& format, PayloadLoader loader);

/// Named kernels with their code (see the file comment). Copies share the loaded code.
class Module {
public:
    /// Serialisation format version written by save().
    static constexpr uint32_t kFormatVersion = 1;

    /// An empty module (no kernels).
    Module() = default;
    /// Loads `payload` with the loader registered for `payload_format` and resolves every
    /// kernel's entry point. `sources` maps a source kind ("ll", "asm", "cuda") to text. Throws
    /// RuntimeError for an unknown format, a missing entry point or duplicate kernel names.
    Module(std::vector<KernelSignature> kernels, std::string payload_format,
           std::vector<uint8_t> payload, std::map<std::string, std::string> sources = {});
    /// As above, with the payload's code already loaded by the caller (a backend that has just
    /// compiled it), and sources generated on first use (get_source, sources, save).
    Module(std::vector<KernelSignature> kernels, std::string payload_format,
           std::vector<uint8_t> payload, std::shared_ptr<const LoadedCode> code,
           std::map<std::string, std::string> sources,
           std::map<std::string, SourceGenerator> lazy_sources);

    /// The kernel called `name`; RuntimeError naming the available ones if there is none.
    Kernel get(const std::string& name) const;
    /// Names of the kernels, in the order they were given.
    std::vector<std::string> kernel_names() const;
    /// The kernels' signatures, in the order they were given.
    const std::vector<KernelSignature>& signatures() const;
    /// Every source of the module, by kind (lazy ones generated now). Thread-safe.
    const std::map<std::string, std::string>& sources() const;
    /// The format and bytes of the payload.
    const std::string& payload_format() const;
    const std::vector<uint8_t>& payload() const;
    /// The source of `kind` ("ll", "asm" ...), generated on first use if it is lazy; RuntimeError
    /// when the module has none of it. Thread-safe.
    const std::string& get_source(const std::string& kind) const;

    /// The module as bytes (see the file comment). With `with_sources` false the sources are left
    /// out (lazy ones are not generated: cheaper, as a measurement worker needs only the code).
    std::vector<uint8_t> save(bool with_sources = true) const;
    /// A module from save()'s bytes, its payload loaded. Throws RuntimeError on corrupt or
    /// truncated bytes, an unsupported version, or a payload format with no loader.
    static Module load(const std::vector<uint8_t>& bytes);

private:
    struct State;
    const State& state() const;
    std::shared_ptr<const State> state_;
};

}  // namespace tessel
