// The CUDA runtime on a GPU: hand-written kernels, compiled with tessel's NVRTC wrapper and run
// through hand-made launch plans (what a generated module carries): results, copies in every
// direction, workspaces, streams, lazy loading from several threads, and the checks that refuse a
// launch the device cannot run. Without a GPU or NVRTC every test skips, saying why.
#include <gtest/gtest.h>

#include <numeric>
#include <thread>

#include "runtime/CudaTestPlans.h"
#include "tessel/Error.h"
#include "tessel/runtime/CUDA.h"
#include "tessel/runtime/Module.h"
#include "tessel/runtime/NDArray.h"
#ifdef TESSEL_HAVE_CUDA
#include "codegen/cuda/NVRTC.h"
#endif

namespace tessel {
namespace {

using LaunchOp = LaunchExpr::Op;

class CudaLaunch : public ::testing::Test {
protected:
    void SetUp() override {
        if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_unavailable_reason();
#ifndef TESSEL_HAVE_CUDA
        GTEST_SKIP() << "tessel was built without NVRTC (TESSEL_USE_CUDA=OFF)";
#endif
    }

    /// A module with kernel `sig` running `plan`, the functions compiled from `source`.
    static Module make_module(const std::string& source, const KernelSignature& sig,
                              const CudaLaunchPlan& plan) {
        CudaPayload payload;
        payload.arch = cuda_device_info(0).arch();
#ifdef TESSEL_HAVE_CUDA
        payload.cubin = internal::nvrtc_compile(source, payload.arch, {}).cubin;
#endif
        payload.plans[sig.name] = plan;
        return Module({sig}, "cuda", encode_cuda_payload(payload));
    }

    static Module add_module(int64_t threads = 128) {
        CudaLaunchPlan plan;
        plan.launches.push_back(test::add_launch("add", threads));
        return make_module(test::kAddSource, test::cuda_add_signature(), plan);
    }

    static NDArray device_array(const std::vector<float>& values) {
        NDArray a = NDArray::empty({static_cast<int64_t>(values.size())}, float32(), cuda(0));
        a.copy_from(values.data(), a.nbytes());
        return a;
    }

    static std::vector<float> host_values(const NDArray& a) {
        std::vector<float> out(static_cast<size_t>(a.num_elements()));
        a.copy_to(out.data(), a.nbytes());
        return out;
    }

    static std::vector<float> iota(size_t n, float start) {
        std::vector<float> v(n);
        std::iota(v.begin(), v.end(), start);
        return v;
    }

    template <typename F>
    static std::string error_of(F&& f) {
        try {
            f();
        } catch (const Error& e) {
            return e.what();
        }
        ADD_FAILURE() << "expected an error";
        return "";
    }
};

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST_F(CudaLaunch, DeviceInfo) {
    CudaDeviceInfo info = cuda_device_info(0);
    EXPECT_GE(cuda_device_count(), 1);
    EXPECT_TRUE(cuda_unavailable_reason().empty());
    EXPECT_FALSE(info.name.empty());
    EXPECT_EQ(info.arch(),
              "sm_" + std::to_string(info.compute_major) + std::to_string(info.compute_minor));
    EXPECT_GE(info.max_threads_per_block, 512);
    EXPECT_GE(info.max_grid_dim[0], 65535);
    EXPECT_GE(info.shared_bytes_per_block_optin, info.shared_bytes_per_block);
    EXPECT_GT(info.total_memory_bytes, 0);
    EXPECT_THROW(cuda_device_info(cuda_device_count()), RuntimeError);
    cuda_synchronize(0);
}

TEST_F(CudaLaunch, CopiesInEveryDirection) {
    std::vector<float> values = iota(1000, 0.5f);
    NDArray a = device_array(values);
    EXPECT_EQ(a.device(), cuda(0));
    EXPECT_EQ(a.alignment(), NDArray::kAllocAlignment);
    EXPECT_EQ(host_values(a), values);
    NDArray d2d = a.copy_to_device(cuda(0));
    EXPECT_NE(d2d.data(), a.data());
    EXPECT_EQ(host_values(d2d), values);
    NDArray host = d2d.copy_to_device(cpu());
    EXPECT_EQ(host.at<float>(999), values[999]);
    EXPECT_EQ(host_values(host.copy_to_device(cuda(0))), values);
    NDArray empty = NDArray::empty({0}, float32(), cuda(0));
    EXPECT_NE(empty.data(), nullptr);
    EXPECT_TRUE(host_values(empty.copy_to_device(cuda(0))).empty());
}

TEST_F(CudaLaunch, DLPackExportAndImport) {
    NDArray a = device_array(iota(16, 1.f));
    dlpack::DLManagedTensor* t = a.to_dlpack();
    EXPECT_EQ(t->dl_tensor.device.device_type, dlpack::kDLCUDA);
    EXPECT_EQ(t->dl_tensor.data, a.data());
    NDArray back = NDArray::from_dlpack(t);
    EXPECT_EQ(back.device(), cuda(0));
    EXPECT_EQ(host_values(back), iota(16, 1.f));
}

TEST_F(CudaLaunch, AddKernel) {
    Kernel k = add_module().get("vadd");
    for (size_t n : {1, 127, 128, 1000, 100000}) {
        NDArray a = device_array(iota(n, 0.f)), b = device_array(iota(n, 1.f));
        NDArray c = NDArray::empty({static_cast<int64_t>(n)}, float32(), cuda(0));
        k({a, b, c});
        std::vector<float> got = host_values(c);  // waits for the legacy default stream
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], 2.f * i + 1.f) << "n " << n << " i " << i;
    }
}

TEST_F(CudaLaunch, StreamsAndZeroSizedGrids) {
    Kernel k = add_module().get("vadd");
    NDArray a = device_array(iota(300, 0.f)), b = device_array(iota(300, 0.f));
    NDArray c = NDArray::empty({300}, float32(), cuda(0));
    k.launch({a, b, c}, reinterpret_cast<void*>(2));  // CU_STREAM_PER_THREAD
    cuda_synchronize(0);
    EXPECT_EQ(host_values(c)[299], 598.f);
    k.launch({b, b, c}, reinterpret_cast<void*>(1));  // CU_STREAM_LEGACY
    EXPECT_EQ(host_values(c)[10], 20.f);
    NDArray e = NDArray::empty({0}, float32(), cuda(0));
    k({e, e, NDArray::empty({0}, float32(), cuda(0))});  // grid 0: nothing launched, no error
    cuda_synchronize(0);
}

TEST_F(CudaLaunch, SavedModuleLoadsLazilyFromManyThreads) {
    Module m = Module::load(add_module().save());
    Kernel k = m.get("vadd");
    NDArray a = device_array(iota(4096, 0.f)), b = device_array(iota(4096, 0.f));
    std::vector<NDArray> outs;
    for (int t = 0; t < 8; ++t) outs.push_back(NDArray::empty({4096}, float32(), cuda(0)));
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) threads.emplace_back([&, t] { k({a, b, outs[t]}); });
    for (auto& th : threads) th.join();
    cuda_synchronize(0);
    for (const NDArray& c : outs) EXPECT_EQ(host_values(c)[4095], 8190.f);
}

TEST_F(CudaLaunch, TwoDevices) {
    if (cuda_device_count() < 2) GTEST_SKIP() << "needs two CUDA devices";
    std::vector<float> values = iota(777, 3.f);
    NDArray a0 = device_array(values);
    NDArray a1 = a0.copy_to_device(cuda(1));  // peer copy
    EXPECT_EQ(a1.device(), cuda(1));
    EXPECT_EQ(host_values(a1), values);
    Kernel k = add_module().get("vadd");  // the cubin loads on each device at its first launch
    NDArray c0 = NDArray::empty({777}, float32(), cuda(0));
    NDArray c1 = NDArray::empty({777}, float32(), cuda(1));
    k({a0, a0, c0});
    k({a1, a1, c1});
    EXPECT_EQ(host_values(c1), host_values(c0));
    EXPECT_EQ(host_values(c1.copy_to_device(cuda(0)))[776], 2.f * values[776]);
    std::string message = error_of([&] { k({a0, a1, c0}); });
    EXPECT_TRUE(contains(message, "must all be on one device")) << message;
}

const char* kTwoStageSource = R"(
extern "C" __global__ void twice(const float* a, float* tmp, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) tmp[i] = 2.f * a[i];
}
extern "C" __global__ void plus_one(const float* tmp, float* c, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) c[i] = tmp[n - 1 - i] + 1.f;
}
)";

KernelSignature two_stage_signature() {
    KernelSignature sig{"two_stage", DeviceType::CUDA, {}};
    sig.args.push_back({"A", float32(), {Dim("n")}, ArgAccess::Read});
    sig.args.push_back({"C", float32(), {Dim("n")}, ArgAccess::Write});
    return sig;
}

// first(A, T, n), second(T, C, n): T is buffer 2 (the first workspace, n floats); `dependent`
// marks the second launch so.
CudaLaunchPlan two_stage_plan(const char* first, const char* second, bool dependent) {
    CudaLaunchPlan plan;
    plan.workspaces.push_back(
        {"T", LaunchExpr{{{LaunchOp::ShapeVar, 0}, {LaunchOp::Const, 4}, {LaunchOp::Mul, 0}}}});
    for (const char* f : {first, second}) {
        ::tessel::CudaLaunch l = test::add_launch(f, 256);
        bool is_first = f == first;
        l.params = {{CudaParam::Kind::Buffer, is_first ? 0 : 2},
                    {CudaParam::Kind::Buffer, is_first ? 2 : 1},
                    {CudaParam::Kind::ShapeVar, 0}};
        l.stage = is_first ? "T" : "C";
        l.dependent = dependent && !is_first;
        plan.launches.push_back(l);
    }
    return plan;
}

TEST_F(CudaLaunch, WorkspacesBetweenLaunches) {
    Kernel k = make_module(kTwoStageSource, two_stage_signature(),
                           two_stage_plan("twice", "plus_one", false))
                   .get("two_stage");
    for (int round = 0; round < 3; ++round) {
        NDArray a = device_array(iota(5000, 0.f));
        NDArray c = NDArray::empty({5000}, float32(), cuda(0));
        k({a, c});
        std::vector<float> got = host_values(c);
        EXPECT_EQ(got[0], 2.f * 4999 + 1.f);
        EXPECT_EQ(got[4999], 1.f);
    }
}

// A dependent launch (CudaLaunch::dependent): the first kernel lets the second start at once and
// takes its time over T (each element a long dependent chain); the second waits for it before
// reading T in reverse, so a launch that did not wait would read T's elements unwritten.
const char* kDependentSource = R"(
extern "C" __global__ void slow_twice(const float* a, float* tmp, long long n) {
    asm volatile("griddepcontrol.launch_dependents;");
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = a[i];
    for (int r = 0; r < 20000; ++r) v = v * 1.0000001f + 1e-7f;
    tmp[i] = 2.f * a[i] + (v - v);
}
extern "C" __global__ void waiting_plus_one(const float* tmp, float* c, long long n) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) c[i] = tmp[n - 1 - i] + 1.f;
}
)";

TEST_F(CudaLaunch, DependentLaunchWaitsForTheLaunchBefore) {
    if (cuda_device_info(0).compute_major < 9)
        GTEST_SKIP() << "programmatic dependent launches need sm_90";
    Kernel k = make_module(kDependentSource, two_stage_signature(),
                           two_stage_plan("slow_twice", "waiting_plus_one", true))
                   .get("two_stage");
    const int64_t n = 1 << 20;
    std::vector<float> values = iota(n, 0.f);
    NDArray a = device_array(values);
    for (int round = 0; round < 3; ++round) {
        NDArray c = NDArray::empty({n}, float32(), cuda(0));
        k({a, c});
        std::vector<float> got = host_values(c);
        for (int64_t i = 0; i < n; i += 4099) ASSERT_EQ(got[i], 2.f * values[n - 1 - i] + 1.f) << i;
        ASSERT_EQ(got[n - 1], 1.f);
    }
}

const char* kDynamicSharedSource = R"(
extern "C" __global__ void reverse_via_shared(const float* a, float* c, long long floats) {
    extern __shared__ float buf[];
    for (long long j = threadIdx.x; j < floats; j += blockDim.x) buf[j] = a[j];
    __syncthreads();
    for (long long j = threadIdx.x; j < floats; j += blockDim.x) c[j] = buf[floats - 1 - j];
}
)";

KernelSignature shared_signature() {
    KernelSignature sig{"reverse", DeviceType::CUDA, {}};
    sig.args.push_back({"A", float32(), {Dim("n")}, ArgAccess::Read});
    sig.args.push_back({"C", float32(), {Dim("n")}, ArgAccess::Write});
    return sig;
}

CudaLaunchPlan shared_plan(LaunchExpr dynamic_shared) {
    ::tessel::CudaLaunch l = test::add_launch("reverse_via_shared", 256);
    l.grid[0] = LaunchExpr::constant(1);
    l.params = {
        {CudaParam::Kind::Buffer, 0}, {CudaParam::Kind::Buffer, 1}, {CudaParam::Kind::ShapeVar, 0}};
    l.stage = "C";
    l.dynamic_shared_bytes = std::move(dynamic_shared);
    CudaLaunchPlan plan;
    plan.launches.push_back(l);
    return plan;
}

TEST_F(CudaLaunch, DynamicSharedMemoryOver48KB) {
    // n floats of dynamic shared memory: 100 KB needs the function's limit raised.
    LaunchExpr bytes{{{LaunchOp::ShapeVar, 0}, {LaunchOp::Const, 4}, {LaunchOp::Mul, 0}}};
    Kernel k =
        make_module(kDynamicSharedSource, shared_signature(), shared_plan(bytes)).get("reverse");
    for (int64_t n : {int64_t(1000), int64_t(25600)}) {
        NDArray a = device_array(iota(static_cast<size_t>(n), 0.f));
        NDArray c = NDArray::empty({n}, float32(), cuda(0));
        k({a, c});
        std::vector<float> got = host_values(c);
        EXPECT_EQ(got[0], n - 1.f);
        EXPECT_EQ(got[static_cast<size_t>(n - 1)], 0.f);
    }
    int64_t too_many = cuda_device_info(0).shared_bytes_per_block_optin / 4 + 1;
    NDArray a = NDArray::empty({too_many}, float32(), cuda(0));
    NDArray c = NDArray::empty({too_many}, float32(), cuda(0));
    std::string message = error_of([&] { k({a, c}); });
    EXPECT_TRUE(contains(message, "stage 'C'")) << message;
    EXPECT_TRUE(contains(message, "bytes of shared memory per block")) << message;
    EXPECT_TRUE(contains(message, std::to_string(cuda_device_info(0).shared_bytes_per_block_optin)))
        << message;
}

TEST_F(CudaLaunch, TooManyThreadsPerBlock) {
    CudaLaunchPlan plan;
    plan.launches.push_back(test::add_launch("add", 128));
    plan.launches[0].block = {LaunchExpr::constant(32), LaunchExpr::constant(64),
                              LaunchExpr::constant(1)};  // 2048 threads
    Kernel k = make_module(test::kAddSource, test::cuda_add_signature(), plan).get("vadd");
    NDArray a = device_array(iota(64, 0.f));
    std::string message = error_of([&] { k({a, a, NDArray::empty({64}, float32(), cuda(0))}); });
    EXPECT_TRUE(contains(message, "2048 threads per block")) << message;
    EXPECT_TRUE(contains(message, "stage 'C'")) << message;
    EXPECT_TRUE(contains(message, "1024")) << message;
}

TEST_F(CudaLaunch, GridYOverTheLimit) {
    CudaLaunchPlan plan;
    plan.launches.push_back(test::add_launch("add", 128));
    plan.launches[0].grid[1] = LaunchExpr::constant(70000);
    Kernel k = make_module(test::kAddSource, test::cuda_add_signature(), plan).get("vadd");
    NDArray a = device_array(iota(64, 0.f));
    std::string message = error_of([&] { k({a, a, NDArray::empty({64}, float32(), cuda(0))}); });
    EXPECT_TRUE(contains(message, "extent y 70000 exceeds the device's maximum 65535")) << message;
}

// 96 accumulators live across a loop the compiler cannot unroll: well over 64 registers a thread,
// so 1024 threads need more than the 64K registers of a block.
const char* kRegisterHeavySource = R"(
extern "C" __global__ void heavy(const float* a, float* c, long long n) {
    float acc[96];
#pragma unroll
    for (int j = 0; j < 96; ++j) acc[j] = 0.f;
#pragma unroll 1
    for (long long i = threadIdx.x; i < n; i += blockDim.x) {
        float x = a[i];
#pragma unroll
        for (int j = 0; j < 96; ++j) acc[j] = acc[j] * x + a[(i + j) % n];
    }
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < 96; ++j) s += acc[j] * (j + 1);
    if (threadIdx.x < n) c[threadIdx.x] = s;
}
)";

TEST_F(CudaLaunch, RegistersTimesThreadsOverTheLimit) {
    KernelSignature sig = shared_signature();
    sig.name = "heavy";
    for (int64_t threads : {int64_t(128), int64_t(1024)}) {
        CudaLaunchPlan plan = shared_plan(LaunchExpr::constant(0));
        plan.launches[0].function = "heavy";
        plan.launches[0].stage = "H";
        plan.launches[0].block[0] = LaunchExpr::constant(threads);
        Kernel k = make_module(kRegisterHeavySource, sig, plan).get("heavy");
        NDArray a = device_array(iota(2048, 0.f));
        NDArray c = NDArray::empty({2048}, float32(), cuda(0));
        if (threads == 128) {
            k({a, c});  // fits
            cuda_synchronize(0);
            continue;
        }
        std::string message = error_of([&] { k({a, c}); });
        EXPECT_TRUE(contains(message, "registers per thread x 1024 threads")) << message;
        EXPECT_TRUE(contains(message, "stage 'H'")) << message;
    }
}

TEST_F(CudaLaunch, MissingFunctionIsReportedAtTheFirstLaunch) {
    CudaLaunchPlan plan;
    plan.launches.push_back(test::add_launch("no_such_function", 128));
    Module m = make_module(test::kAddSource, test::cuda_add_signature(), plan);
    NDArray a = device_array(iota(8, 0.f));
    std::string message = error_of([&] {
        m.get("vadd")({a, a, NDArray::empty({8}, float32(), cuda(0))});
    });
    EXPECT_TRUE(contains(message, "no function 'no_such_function'")) << message;
}

TEST_F(CudaLaunch, CorruptCubinIsADecodedDriverError) {
    CudaPayload payload = test::add_payload({0x7f, 'E', 'L', 'F', 0, 0, 0, 0});
    Module m({test::cuda_add_signature()}, "cuda", encode_cuda_payload(payload));
    NDArray a = device_array(iota(8, 0.f));
    std::string message = error_of([&] {
        m.get("vadd")({a, a, NDArray::empty({8}, float32(), cuda(0))});
    });
    EXPECT_TRUE(contains(message, "cuModuleLoadData failed: CUDA_ERROR_")) << message;
}

}  // namespace
}  // namespace tessel
