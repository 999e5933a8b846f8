// The calling convention of compiled kernels: what each argument must be, and the C entry point
// that generated code implements.
//
// A kernel's entry point receives the data pointers of its arguments in signature order, and the
// values of the signature's symbolic extents in the order of KernelSignature::shape_vars():
//
//   extern "C" int32_t my_kernel(void* const* args, const int64_t* shape_vars);
//
// It returns 0 on success; any other value is reported as a RuntimeError by Kernel::operator().
// Arguments arrive checked (Kernel.h): right count, dtype, device, shape, contiguous, aligned as
// declared, non-null, and not overlapping unless declared in-place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/runtime/DataType.h"
#include "tessel/runtime/Device.h"

namespace tessel {

/// The C entry point of a compiled kernel (see the file comment).
using KernelEntry = int32_t (*)(void* const* args, const int64_t* shape_vars);

/// One extent of an argument's shape: a constant, or a symbolic name bound at call time (every
/// extent with the same name must have the same value).
struct Dim {
    int64_t value = 0;  ///< the extent, when `name` is empty
    std::string name;   ///< the symbolic extent's name; empty for a constant

    Dim(int64_t v) : value(v) {}  // NOLINT: implicit, so shapes read {64, Dim("n")}
    explicit Dim(std::string n) : name(std::move(n)) {}
    bool is_symbolic() const { return !name.empty(); }
    bool operator==(const Dim& o) const = default;
};

/// How a kernel uses an argument.
enum class ArgAccess : uint8_t {
    Read,       ///< only read
    Write,      ///< only written
    ReadWrite,  ///< read and written
};

/// What a kernel requires of one argument.
struct ArgSpec {
    std::string name;
    DataType dtype;
    std::vector<Dim> shape;
    ArgAccess access = ArgAccess::Read;
    /// May share memory with other arguments (the kernel was compiled for that); exempt from the
    /// overlap check.
    bool in_place = false;
    /// Alignment in bytes the kernel assumes of the data pointer; 0 means the element size.
    int64_t alignment = 0;

    bool is_written() const { return access != ArgAccess::Read; }
    bool operator==(const ArgSpec& o) const = default;
};

/// A kernel's name, device type and arguments.
struct KernelSignature {
    std::string name;
    DeviceType device_type = DeviceType::CPU;
    std::vector<ArgSpec> args;

    /// The distinct symbolic extent names, in order of first appearance: the order of the entry
    /// point's `shape_vars`.
    std::vector<std::string> shape_vars() const;
    bool operator==(const KernelSignature& o) const = default;
};

}  // namespace tessel
