// TMA tensor map parameters on a GPU (sm_90 or newer): a hand-written kernel copies a matrix tile
// by tile with cp.async.bulk.tensor through a map the runtime encodes from the call's shape
// values; out-of-bounds elements of an edge tile read as zero; the map is encoded again for
// another array and another shape; a shape TMA cannot read is refused before anything runs.
// Without a Hopper GPU or NVRTC every test skips, saying why.
#include <gtest/gtest.h>

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

using Op = LaunchExpr::Op;

// One block per 32 x 8 tile of A (float32[m, n]): thread 0 starts the bulk tensor copy of the
// tile into shared memory, every thread waits on the mbarrier, then the block writes the whole
// tile to C (float32[r, w], r and w the tile-padded extents), out-of-bounds zeros included.
const char* kTmaCopySource = R"(
struct __align__(64) tsl_tensor_map { unsigned long long v[16]; };

extern "C" __global__ void tma_copy(const __grid_constant__ tsl_tensor_map a, float* c,
                                    long long w) {
    __shared__ __align__(128) float tile[8][32];
    __shared__ __align__(8) unsigned long long bar;
    int x = blockIdx.x * 32, y = blockIdx.y * 8;
    unsigned bar_addr = (unsigned)__cvta_generic_to_shared(&bar);
    unsigned tile_addr = (unsigned)__cvta_generic_to_shared(&tile[0][0]);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar_addr));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     :: "r"(bar_addr), "r"(8 * 32 * 4) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3}], [%4];"
                     :: "r"(tile_addr), "l"(&a), "r"(x), "r"(y), "r"(bar_addr) : "memory");
    }
    asm volatile("{\n"
                 ".reg .pred done;\n"
                 "WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
                 "@!done bra WAIT;\n"
                 "}\n" :: "r"(bar_addr) : "memory");
    for (int i = threadIdx.x; i < 8 * 32; i += blockDim.x)
        c[(long long)(y + i / 32) * w + x + i % 32] = tile[i / 32][i % 32];
}
)";

LaunchExpr product(LaunchExpr a, int64_t k) {
    a.terms.push_back({Op::Const, k});
    a.terms.push_back({Op::Mul, 0});
    return a;
}

/// (A: float32[m, n], C: float32[r, w]); shape variables m, n, r, w.
KernelSignature copy_signature() {
    KernelSignature sig{"tma_copy", DeviceType::CUDA, {}};
    sig.args.push_back({"A", float32(), {Dim("m"), Dim("n")}, ArgAccess::Read});
    sig.args.push_back({"C", float32(), {Dim("r"), Dim("w")}, ArgAccess::Write});
    return sig;
}

/// One block of 128 threads per 32 x 8 tile of A, through a map of A (dims n, m; row stride 4n).
CudaLaunchPlan copy_plan() {
    CudaTensorMap map;
    map.buffer = 0;
    map.dtype = "float32";
    map.dims = {LaunchExpr::shape_var(1), LaunchExpr::shape_var(0)};
    map.strides = {product(LaunchExpr::shape_var(1), 4)};
    map.box = {32, 8};
    CudaLaunch l;
    l.function = "tma_copy";
    l.stage = "C";
    l.grid = {LaunchExpr::shape_var(3), LaunchExpr::shape_var(2), LaunchExpr::constant(1)};
    l.grid[0].terms.push_back({Op::Const, 32});
    l.grid[0].terms.push_back({Op::FloorDiv, 0});
    l.grid[1].terms.push_back({Op::Const, 8});
    l.grid[1].terms.push_back({Op::FloorDiv, 0});
    l.block = {LaunchExpr::constant(128), LaunchExpr::constant(1), LaunchExpr::constant(1)};
    l.params = {{CudaParam::Kind::TensorMap, 0},
                {CudaParam::Kind::Buffer, 1},
                {CudaParam::Kind::ShapeVar, 3}};
    l.tensor_maps = {map};
    CudaLaunchPlan plan;
    plan.launches.push_back(l);
    return plan;
}

class CudaTensorMapLaunch : public ::testing::Test {
protected:
    void SetUp() override {
        if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_unavailable_reason();
#ifndef TESSEL_HAVE_CUDA
        GTEST_SKIP() << "tessel was built without NVRTC (TESSEL_USE_CUDA=OFF)";
#endif
        if (cuda_device_info(0).compute_major < 9)
            GTEST_SKIP() << "TMA needs sm_90 or newer; device 0 is " << cuda_device_info(0).arch();
    }

    static Kernel copy_kernel() {
        CudaPayload payload;
        payload.arch = cuda_device_info(0).arch();
#ifdef TESSEL_HAVE_CUDA
        payload.cubin = internal::nvrtc_compile(kTmaCopySource, payload.arch, {}).cubin;
#endif
        payload.plans["tma_copy"] = copy_plan();
        return Module({copy_signature()}, "cuda", encode_cuda_payload(payload)).get("tma_copy");
    }

    /// A (m x n, A[i][j] = 1 + i * n + j) copied by `k` into C (padded to whole tiles); checks
    /// C holds A and zeros beyond it.
    static void check_copy(const Kernel& k, int64_t m, int64_t n) {
        int64_t r = (m + 7) / 8 * 8, w = (n + 31) / 32 * 32;
        std::vector<float> values(static_cast<size_t>(m * n));
        for (size_t i = 0; i < values.size(); ++i) values[i] = 1.f + static_cast<float>(i);
        NDArray a = NDArray::empty({m, n}, float32(), cuda(0));
        a.copy_from(values.data(), a.nbytes());
        NDArray c = NDArray::empty({r, w}, float32(), cuda(0));
        k({a, c});
        std::vector<float> got(static_cast<size_t>(r * w));
        c.copy_to(got.data(), c.nbytes());
        for (int64_t i = 0; i < r; ++i) {
            for (int64_t j = 0; j < w; ++j) {
                float want = i < m && j < n ? values[static_cast<size_t>(i * n + j)] : 0.f;
                ASSERT_EQ(got[static_cast<size_t>(i * w + j)], want)
                    << m << " x " << n << ": C[" << i << "][" << j << "]";
            }
        }
    }
};

TEST_F(CudaTensorMapLaunch, CopiesTilesWithZerosOutOfBounds) {
    Kernel k = copy_kernel();
    check_copy(k, 64, 128);  // whole tiles
    check_copy(k, 64, 128);  // another array (another address): encoded again
    check_copy(k, 21, 100);  // edge tiles in both dims: the rest reads as zero
    check_copy(k, 3, 4);     // one tile, mostly out of bounds
}

TEST_F(CudaTensorMapLaunch, RefusesAStrideTmaCannotRead) {
    Kernel k = copy_kernel();
    NDArray a = NDArray::empty({16, 101}, float32(), cuda(0));  // rows of 404 bytes
    NDArray c = NDArray::empty({16, 128}, float32(), cuda(0));
    try {
        k({a, c});
        FAIL() << "expected RuntimeError";
    } catch (const RuntimeError& e) {
        std::string message = e.what();
        for (const char* part : {"CUDA kernel 'tma_copy'", "of 'tma_copy'",
                                 "tensor map of argument 0 (float32, dims 101 x 16",
                                 "byte stride 404 of dim 1 is not a multiple of 16"})
            EXPECT_NE(message.find(part), std::string::npos) << message;
    }
    cuda_synchronize(0);
}

}  // namespace
}  // namespace tessel
