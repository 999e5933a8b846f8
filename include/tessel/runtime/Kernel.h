// Kernel: a compiled function of a Module, callable with NDArrays.
//
//   Kernel k = module.get("matmul");
//   k({A, B, C});   // checks every argument, then runs
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

/// Checks `args` against `signature` (see the file comment) and returns the values of its
/// symbolic extents in shape_vars() order. Throws RuntimeError on the first violation.
std::vector<int64_t> check_arguments(const KernelSignature& signature,
                                     const std::vector<NDArray>& args);

/// A callable kernel: a signature, an entry point, and whatever keeps the code loaded.
class Kernel {
public:
    Kernel() = default;
    /// A kernel calling `entry`; `code_owner` keeps the code the entry point lives in alive.
    Kernel(KernelSignature signature, KernelEntry entry, std::shared_ptr<const void> code_owner);

    const KernelSignature& signature() const { return signature_; }
    /// Checks the arguments, then runs the kernel on them. Throws RuntimeError when a check fails
    /// (nothing touched) or the kernel returns non-zero.
    void operator()(const std::vector<NDArray>& args) const;

private:
    KernelSignature signature_;
    KernelEntry entry_ = nullptr;
    std::shared_ptr<const void> code_owner_;
};

}  // namespace tessel

extern "C" {
/// Called by generated code when a check inside a kernel fails, before it returns a non-zero
/// status: Kernel::operator() adds the (first) message to its RuntimeError. Thread-safe.
void tessel_report_kernel_error(const char* message);
}
