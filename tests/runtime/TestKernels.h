// Kernels for the runtime tests, and the "test-native" payload format: its loader maps kernel
// names to functions registered in this process.
#pragma once

#include <map>
#include <string>

#include "tessel/runtime/Module.h"

namespace tessel::test {

/// Calls of add_kernel so far.
inline int add_calls = 0;

/// C[i] = A[i] + B[i] for i < n: arguments (A, B, C) of float32[n].
inline int32_t add_kernel(void* const* args, const int64_t* shape_vars) {
    ++add_calls;
    auto* a = static_cast<const float*>(args[0]);
    auto* b = static_cast<const float*>(args[1]);
    auto* c = static_cast<float*>(args[2]);
    for (int64_t i = 0; i < shape_vars[0]; ++i) c[i] = a[i] + b[i];
    return 0;
}

/// Always fails with status 7.
inline int32_t failing_kernel(void* const*, const int64_t*) {
    return 7;
}

/// The signature of add_kernel, named `name`; `c_in_place` declares C in-place.
inline KernelSignature add_signature(const std::string& name = "add", bool c_in_place = false) {
    KernelSignature sig{name, DeviceType::CPU, {}};
    sig.args.push_back({"A", float32(), {Dim("n")}, ArgAccess::Read, false, 0});
    sig.args.push_back({"B", float32(), {Dim("n")}, ArgAccess::Read, false, 16});
    sig.args.push_back({"C", float32(), {Dim("n")}, ArgAccess::Write, c_in_place, 0});
    return sig;
}

/// Registers the "test-native" loader: every kernel name it is asked for resolves to
/// add_kernel, except "fail" (failing_kernel) and "missing" (no entry point).
inline void register_test_native() {
    struct Code : LoadedCode {
        KernelEntry lookup(const std::string& name) const override {
            if (name == "missing") return nullptr;
            if (name == "fail") return failing_kernel;
            return add_kernel;
        }
    };
    register_payload_loader(
        "test-native", [](const std::vector<uint8_t>&) { return std::make_shared<const Code>(); });
}

}  // namespace tessel::test
