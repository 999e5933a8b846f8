// Argument checks of Kernel calls. Every check reads only NDArray metadata, never the memory.
#include <map>
#include <sstream>

#include "tessel/Error.h"
#include "tessel/runtime/Kernel.h"

namespace tessel {
namespace internal {
namespace {

std::string argument_label(const KernelSignature& sig, size_t index) {
    std::ostringstream os;
    os << "kernel '" << sig.name << "': argument " << index << " ('" << sig.args[index].name
       << "')";
    return os.str();
}

std::string shape_str(const std::vector<int64_t>& shape) {
    std::ostringstream os;
    os << "[";
    for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
    os << "]";
    return os.str();
}

std::string shape_str(const std::vector<Dim>& shape) {
    std::ostringstream os;
    os << "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        os << (i ? ", " : "");
        if (shape[i].is_symbolic())
            os << shape[i].name;
        else
            os << shape[i].value;
    }
    os << "]";
    return os.str();
}

/// Checks the extents of argument `index` and binds its symbolic extents in `bound`.
void check_shape(const KernelSignature& sig, size_t index, const NDArray& array,
                 std::map<std::string, int64_t>& bound) {
    const ArgSpec& spec = sig.args[index];
    const auto& shape = array.shape();
    bool ok = shape.size() == spec.shape.size();
    for (size_t d = 0; ok && d < shape.size(); ++d) {
        const Dim& dim = spec.shape[d];
        if (!dim.is_symbolic()) {
            ok = shape[d] == dim.value;
            continue;
        }
        auto [it, inserted] = bound.emplace(dim.name, shape[d]);
        if (!inserted && it->second != shape[d]) {
            TESSEL_THROW(RuntimeError)
                << argument_label(sig, index) << ": extent " << d << " is " << shape[d] << " but '"
                << dim.name << "' is already " << it->second << " from an earlier argument";
        }
    }
    if (!ok) {
        TESSEL_THROW(RuntimeError) << argument_label(sig, index) << ": expected shape "
                                   << shape_str(spec.shape) << ", got " << shape_str(shape);
    }
}

void check_one(const KernelSignature& sig, size_t index, const NDArray& array,
               std::map<std::string, int64_t>& bound) {
    const ArgSpec& spec = sig.args[index];
    std::string label = argument_label(sig, index);
    if (!array.defined() || array.data() == nullptr) {
        TESSEL_THROW(RuntimeError) << label << ": null data pointer";
    }
    if (array.device().type != sig.device_type) {
        TESSEL_THROW(RuntimeError)
            << label << ": on device " << array.device().str() << ", but the kernel runs on "
            << device_type_name(sig.device_type);
    }
    if (array.dtype() != spec.dtype) {
        TESSEL_THROW(RuntimeError)
            << label << ": expected dtype " << spec.dtype.str() << ", got " << array.dtype().str();
    }
    check_shape(sig, index, array, bound);
    if (!array.is_contiguous()) {
        TESSEL_THROW(RuntimeError)
            << label << ": not contiguous (strides " << shape_str(array.strides()) << " for shape "
            << shape_str(array.shape()) << "); kernels take compact row-major arrays";
    }
    int64_t required = spec.alignment > 0 ? spec.alignment : spec.dtype.bytes();
    if (required > 1 && reinterpret_cast<uintptr_t>(array.data()) % required != 0) {
        TESSEL_THROW(RuntimeError) << label << ": data pointer is aligned to " << array.alignment()
                                   << " bytes, the kernel needs " << required;
    }
}

void check_one_device(const KernelSignature& sig, const std::vector<NDArray>& args) {
    for (size_t i = 1; i < args.size(); ++i) {
        if (args[i].device() == args[0].device()) continue;
        TESSEL_THROW(RuntimeError)
            << argument_label(sig, i) << ": on device " << args[i].device().str()
            << ", but argument 0 ('" << sig.args[0].name << "') is on " << args[0].device().str()
            << "; a kernel's arguments must all be on one device";
    }
}

bool overlaps(const NDArray& a, const NDArray& b) {
    if (a.nbytes() == 0 || b.nbytes() == 0 || !(a.device() == b.device())) return false;
    auto a0 = reinterpret_cast<uintptr_t>(a.data()), b0 = reinterpret_cast<uintptr_t>(b.data());
    return a0 < b0 + static_cast<uintptr_t>(b.nbytes()) &&
           b0 < a0 + static_cast<uintptr_t>(a.nbytes());
}

void check_overlaps(const KernelSignature& sig, const std::vector<NDArray>& args) {
    for (size_t i = 0; i < args.size(); ++i) {
        for (size_t j = i + 1; j < args.size(); ++j) {
            const ArgSpec &a = sig.args[i], &b = sig.args[j];
            if (!(a.is_written() || b.is_written()) || a.in_place || b.in_place) continue;
            if (!overlaps(args[i], args[j])) continue;
            TESSEL_THROW(RuntimeError)
                << argument_label(sig, i) << " and argument " << j << " ('" << b.name
                << "') overlap in memory, and " << (a.is_written() ? "'" + a.name : "'" + b.name)
                << "' is written; declare the argument in-place if the kernel allows it";
        }
    }
}

}  // namespace
}  // namespace internal

std::vector<std::string> KernelSignature::shape_vars() const {
    std::vector<std::string> names;
    for (const ArgSpec& arg : args) {
        for (const Dim& dim : arg.shape) {
            if (!dim.is_symbolic()) continue;
            bool seen = false;
            for (const auto& n : names) seen = seen || n == dim.name;
            if (!seen) names.push_back(dim.name);
        }
    }
    return names;
}

std::vector<int64_t> check_arguments(const KernelSignature& sig, const std::vector<NDArray>& args) {
    if (args.size() != sig.args.size()) {
        TESSEL_THROW(RuntimeError) << "kernel '" << sig.name << "' takes " << sig.args.size()
                                   << " arguments, got " << args.size();
    }
    std::map<std::string, int64_t> bound;
    for (size_t i = 0; i < args.size(); ++i) internal::check_one(sig, i, args[i], bound);
    internal::check_one_device(sig, args);
    internal::check_overlaps(sig, args);
    std::vector<int64_t> values;
    for (const auto& name : sig.shape_vars()) values.push_back(bound.at(name));
    return values;
}

}  // namespace tessel
