// Kernel: a compiled function of a Module, callable with NDArrays.
//
//   Kernel k = module.get("matmul");
//   k({A, B, C});   // checks every argument, then runs
//   k.launch({A, B, C}, stream);   // CUDA: asynchronously on `stream`
//
// A CPU kernel runs to completion in the call. A CUDA kernel is queued on a stream and the call
// returns before it has run: operator() queues it on the legacy default stream, so copying a
// result to the host afterwards (NDArray::copy_to, .numpy() in Python) waits for it; errors the
// kernel meets while running surface at the next synchronising call (cuda_synchronize).
//
// Before any memory is touched, the arguments are checked against the signature: count; then, for
// each argument in order, null data, device, dtype, shape (constants and consistent symbolic
// extents), contiguity and alignment; finally that no written argument overlaps another argument
// unless one of the two is declared in-place. A failed check throws RuntimeError naming the
// kernel and the argument by index and name; nothing has been read or written.
#pragma once

#include <memory>
#include <vector>

#include "tessel/runtime/KernelSignature.h"
#include "tessel/runtime/NDArray.h"

namespace tessel {

/// Checks `args` against `signature` (see the file comment; also: all arguments are on one
/// device) and returns the values of its
/// symbolic extents in shape_vars() order. Throws RuntimeError on the first violation.
std::vector<int64_t> check_arguments(const KernelSignature& signature,
                                     const std::vector<NDArray>& args);

/// How a kernel runs whose code is not a C entry point (a CUDA kernel: a launch plan that the
/// runtime interprets). Implementations are thread-safe.
class KernelLauncher {
public:
    virtual ~KernelLauncher() = default;
    /// Runs the kernel on `args`, already checked against its signature (all on one device), with
    /// `shape_vars` the values of its symbolic extents; asynchronously on `stream` on devices
    /// with streams (null: the default stream). Throws RuntimeError or CompileError, naming the
    /// kernel, when it cannot run.
    virtual void launch(const std::vector<NDArray>& args, const std::vector<int64_t>& shape_vars,
                        void* stream) const = 0;
    /// As launch(), on the arguments' data pointers (`num_args` of them, all on `device`).
    virtual void launch_data(void* const* data, size_t num_args, Device device,
                             const std::vector<int64_t>& shape_vars, void* stream) const = 0;
};

/// A callable kernel: a signature, an entry point or a launcher, and whatever keeps the code
/// loaded.
class Kernel {
public:
    Kernel() = default;
    /// A kernel calling `entry`; `code_owner` keeps the code the entry point lives in alive.
    Kernel(KernelSignature signature, KernelEntry entry, std::shared_ptr<const void> code_owner);
    /// A kernel run by `launcher`; `code_owner` keeps the code alive.
    Kernel(KernelSignature signature, std::shared_ptr<const KernelLauncher> launcher,
           std::shared_ptr<const void> code_owner);

    const KernelSignature& signature() const { return signature_; }
    /// Checks the arguments, then runs the kernel on them (a CUDA kernel: queued on the legacy
    /// default stream, see the file comment). Throws RuntimeError when a check fails (nothing
    /// touched) or the kernel cannot run or returns non-zero.
    void operator()(const std::vector<NDArray>& args) const { launch(args, nullptr); }
    /// As operator(), on `stream`: a CUstream of the arguments' device for a CUDA kernel (null:
    /// the legacy default stream), queued asynchronously; ignored by CPU kernels.
    void launch(const std::vector<NDArray>& args, void* stream) const;
    /// Runs the kernel on data pointers whose arrays were checked against the signature before:
    /// arrays of the same dtypes, shapes, strides and device passed check_arguments (which gave
    /// `shape_vars`), and these pointers are non-null, aligned as the signature says and do not
    /// overlap where it forbids. For callers that cache the check per distinct argument set (the
    /// Python binding): no allocation on CPU kernels. `data` holds signature().args.size()
    /// pointers on `device`.
    void launch_checked(void* const* data, Device device, const std::vector<int64_t>& shape_vars,
                        void* stream) const;

private:
    KernelSignature signature_;
    KernelEntry entry_ = nullptr;
    std::shared_ptr<const KernelLauncher> launcher_;
    std::shared_ptr<const void> code_owner_;
};

}  // namespace tessel

extern "C" {
/// Called by generated code when a check inside a kernel fails, before it returns a non-zero
/// status: Kernel::operator() adds the (first) message to its RuntimeError. Thread-safe.
void tessel_report_kernel_error(const char* message);
}
