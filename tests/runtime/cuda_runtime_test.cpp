// The CUDA runtime without a GPU: the driver reports why it is unavailable, CUDA arrays and
// launches throw RuntimeError saying so, and CUDA modules load, save and load again (the cubin is
// loaded onto a device only at the first launch). On a machine with a GPU the tests that need its
// absence skip; tests/cuda runs there.
#include <gtest/gtest.h>

#include "runtime/CudaTestPlans.h"
#include "tessel/Error.h"
#include "tessel/runtime/CUDA.h"
#include "tessel/runtime/Module.h"
#include "tessel/runtime/NDArray.h"

namespace tessel {
namespace {

#define SKIP_WITH_GPU() \
    if (cuda_available()) GTEST_SKIP() << "a CUDA device is present; tests/cuda covers it"

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

template <typename F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const RuntimeError& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected RuntimeError";
    return "";
}

Module add_module() {
    std::vector<uint8_t> fake_cubin = {0x7f, 'E', 'L', 'F', 1, 2, 3};
    return Module({test::cuda_add_signature()}, "cuda",
                  encode_cuda_payload(test::add_payload(fake_cubin)), {{"cu", test::kAddSource}});
}

TEST(CudaRuntime, UnavailableWithAReason) {
    SKIP_WITH_GPU();
    std::string reason = cuda_unavailable_reason();
    EXPECT_FALSE(reason.empty());
    EXPECT_EQ(cuda_device_count(), 0);
    EXPECT_TRUE(contains(error_of([] { cuda_device_info(0); }), reason));
    EXPECT_TRUE(contains(error_of([] { cuda_synchronize(0); }), reason));
}

TEST(CudaRuntime, ArraysNeedADevice) {
    SKIP_WITH_GPU();
    std::string message = error_of([] { NDArray::empty({4}, float32(), cuda(0)); });
    EXPECT_TRUE(contains(message, cuda_unavailable_reason())) << message;
    NDArray host = NDArray::empty({4}, float32());
    EXPECT_THROW(host.copy_to_device(cuda(0)), RuntimeError);
}

TEST(CudaRuntime, PayloadRoundTrip) {
    CudaPayload p = test::add_payload({1, 2, 3, 4});
    CudaLaunch second = test::add_launch("add2", 256);
    second.dynamic_shared_bytes = LaunchExpr::constant(65536);
    second.resources = {40, 0, 0, 0, 1024};
    second.dependent = true;
    p.plans["vadd"].launches.push_back(second);
    p.plans["vadd"].workspaces.push_back({"tmp", test::ceil_div_n(4)});
    EXPECT_EQ(decode_cuda_payload(encode_cuda_payload(p)), p);
    std::vector<uint8_t> bytes = encode_cuda_payload(p);
    bytes.resize(20);
    EXPECT_THROW(decode_cuda_payload(bytes), RuntimeError);
}

TEST(CudaRuntime, ModuleLoadsAndRoundTripsWithoutAGpu) {
    Module m = add_module();  // the built-in "cuda" loader; nothing touches a GPU
    EXPECT_EQ(m.kernel_names(), std::vector<std::string>{"vadd"});
    EXPECT_EQ(m.get("vadd").signature(), test::cuda_add_signature());
    Module back = Module::load(m.save());
    EXPECT_EQ(back.signatures(), m.signatures());
    EXPECT_EQ(back.payload(), m.payload());
    EXPECT_EQ(back.payload_format(), "cuda");
    EXPECT_EQ(back.get_source("cu"), test::kAddSource);
    EXPECT_EQ(decode_cuda_payload(back.payload()).plans.at("vadd").launches[0].function, "add");
}

TEST(CudaRuntime, ModuleRejectsAKernelWithoutAPlan) {
    std::vector<uint8_t> payload = encode_cuda_payload(test::add_payload({1}));
    std::string message =
        error_of([&] { Module({test::cuda_add_signature("other")}, "cuda", payload); });
    EXPECT_TRUE(contains(message, "no entry point for kernel 'other'")) << message;
    EXPECT_THROW(Module({test::cuda_add_signature()}, "cuda", {1, 2, 3}), RuntimeError);
}

TEST(CudaRuntime, LaunchWithoutAGpuThrows) {
    SKIP_WITH_GPU();
    Kernel k = add_module().get("vadd");
    float fake[24];  // never dereferenced: the launch stops at the missing driver
    std::vector<NDArray> args;
    for (int i = 0; i < 3; ++i)
        args.push_back(NDArray::from_external(fake + 8 * i, {8}, float32(), cuda(0), nullptr));
    std::string message = error_of([&] { k(args); });
    EXPECT_TRUE(contains(message, cuda_unavailable_reason())) << message;
    EXPECT_THROW(k.launch(args, reinterpret_cast<void*>(1)), RuntimeError);
}

TEST(CudaRuntime, ArgumentsMustShareOneDevice) {
    Kernel k = add_module().get("vadd");
    float fake[8];
    std::vector<NDArray> args = {
        NDArray::from_external(fake, {2}, float32(), cuda(0), nullptr),
        NDArray::from_external(fake + 2, {2}, float32(), cuda(1), nullptr),
        NDArray::from_external(fake + 4, {2}, float32(), cuda(0), nullptr)};
    std::string message = error_of([&] { k(args); });
    EXPECT_TRUE(contains(message, "argument 1 ('B'): on device cuda:1")) << message;
    EXPECT_TRUE(contains(message, "must all be on one device")) << message;
    args[1] = NDArray::empty({2}, float32());  // on the host: the device-type check says so
    message = error_of([&] { k(args); });
    EXPECT_TRUE(contains(message, "cpu:0")) << message;
}

TEST(CudaRuntime, DLPackKeepsTheCudaDevice) {
    float fake[4];
    NDArray a = NDArray::from_external(fake, {4}, float32(), cuda(1), nullptr);
    dlpack::DLManagedTensor* t = a.to_dlpack();
    EXPECT_EQ(t->dl_tensor.device.device_type, dlpack::kDLCUDA);
    EXPECT_EQ(t->dl_tensor.device.device_id, 1);
    NDArray back = NDArray::from_dlpack(t);
    EXPECT_EQ(back.device(), cuda(1));
    EXPECT_EQ(back.data(), static_cast<void*>(fake));
}

}  // namespace
}  // namespace tessel
