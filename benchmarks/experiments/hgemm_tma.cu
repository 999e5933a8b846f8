// An experiment for issue 25's bar (docs/notes/tensorcore.md, "Warp specialisation by hand"):
// hgemm_ws.cu with the tiles copied by the Tensor Memory Accelerator. One producer thread issues
// a stage's copies (A's 128 x 64 tile as one box, B's 64 x 256 tile as four boxes of 64 x 64:
// a 128-byte swizzled box is at most 128 bytes wide) with cp.async.bulk.tensor, which signal the
// stage's `full` mbarrier by bytes; 8 consumer warps multiply (ldmatrix on the 128-byte swizzled
// layout the copies write: the 16-byte chunk c of a 128-byte row r at chunk c ^ (r % 8)) and
// arrive on `empty`. MCAST=1: clusters of two blocks along M, each block copying two of B's
// four boxes into both blocks (.multicast::cluster), `empty` counting both blocks' consumers.
// The tensor maps (cuTensorMapEncodeTiled) are kernel parameters: hgemm_l2_bound.py makes them.
#include <cuda.h>
#include <cuda_fp16.h>

#ifndef STAGES
#define STAGES 4
#endif
#ifndef MCAST
#define MCAST 0
#endif
#define CLUSTER (MCAST ? 2 : 1)
#define BM 128
#define BN 256
#define BK 64
#define CONSUMERS 8
#define A_BYTES (BM * BK * 2)  // one stage's A tile: 16 KB
#define B_BYTES (BK * BN * 2)  // 32 KB, four boxes of 8 KB

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile(
        "{\n .reg .b64 state;\n mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}\n" ::
            "r"(bar),
        "r"(bytes)
        : "memory");
}

__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    asm volatile(
        "{\n .reg .pred done;\n"
        "WAIT:\n"
        " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        " @!done bra WAIT;\n"
        "}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}

// Arrives on the mbarrier at this block's shared address `bar` in block `rank` of the cluster.
__device__ __forceinline__ void mbar_arrive_in(unsigned bar, unsigned rank) {
    asm volatile(
        "{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
        " mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
        "r"(rank)
        : "memory");
}

__device__ __forceinline__ void cluster_sync() {
    asm volatile(
        "barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::
            : "memory");
}

// The box of `map` at (x, y) (x the inner coordinate) into shared memory at `dst`; with
// `mask`, into the same place in each block of the cluster it names.
__device__ __forceinline__ void tma_box(unsigned dst, const CUtensorMap* map, int x, int y,
                                        unsigned bar, unsigned short mask) {
    if (MCAST && mask)
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
            ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
            "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(bar), "h"(mask)
            : "memory");
    else
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
            "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(bar)
            : "memory");
}

#if MCAST
#define CLUSTER_DIMS __cluster_dims__(1, CLUSTER, 1)
#else
#define CLUSTER_DIMS
#endif
extern "C" __global__ void CLUSTER_DIMS __launch_bounds__(32 * (CONSUMERS + 1), 1)
hgemm(const half* __restrict__ A, const half* __restrict__ B, float* __restrict__ C, int M,
      int N, int K, const __grid_constant__ CUtensorMap map_a,
      const __grid_constant__ CUtensorMap map_b) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    // 128-byte swizzled boxes need 1024-byte aligned destinations.
    const unsigned base = (smem_addr(smem_raw) + 1023u) & ~1023u;
    auto a_tile = [&](int s) { return base + s * A_BYTES; };
    auto b_tile = [&](int s) { return base + STAGES * A_BYTES + s * B_BYTES; };

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const int tiles = K / BK;
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(smem_addr(&full[s]), 1);
            mbar_init(smem_addr(&empty[s]), CONSUMERS * CLUSTER);
        }
    }
#if MCAST
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    cluster_sync();
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
#else
    __syncthreads();
    const unsigned rank = 0;
#endif

    if (warp == CONSUMERS) {  // the producer: its first lane issues every copy
        if (lane == 0) {
            for (int kt = 0; kt < tiles; ++kt) {
                const int s = kt % STAGES, use = kt / STAGES;
                if (use > 0) mbar_wait(smem_addr(&empty[s]), (use - 1) & 1);
                const unsigned bar = smem_addr(&full[s]);
                mbar_expect_tx(bar, A_BYTES + B_BYTES);
                tma_box(a_tile(s), &map_a, kt * BK, bm, bar, 0);
                for (int q = rank * (4 / CLUSTER); q < (rank + 1) * (4 / CLUSTER); ++q)
                    tma_box(b_tile(s) + q * (B_BYTES / 4), &map_b, bn + q * 64, kt * BK, bar,
                            (1 << CLUSTER) - 1);
            }
        }
    } else {
        const int warp_m = warp / 4, warp_n = warp % 4;
        float acc[4][8][4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j)
#pragma unroll
                for (int v = 0; v < 4; ++v) acc[i][j][v] = 0.f;

        for (int kt = 0; kt < tiles; ++kt) {
            const int s = kt % STAGES, use = kt / STAGES;
            mbar_wait(smem_addr(&full[s]), use & 1);
            const unsigned as = a_tile(s), bs = b_tile(s) + warp_n * (B_BYTES / 4);
#pragma unroll
            for (int ks = 0; ks < BK / 16; ++ks) {
                unsigned a[4][4], b[8][2];
#pragma unroll
                for (int mi = 0; mi < 4; ++mi) {
                    const int row = warp_m * 64 + mi * 16 + lane % 16, chunk = ks * 2 + lane / 16;
                    const unsigned p = as + row * 128 + ((chunk ^ (row & 7)) << 4);
                    asm volatile(
                        "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                        : "=r"(a[mi][0]), "=r"(a[mi][1]), "=r"(a[mi][2]), "=r"(a[mi][3])
                        : "r"(p));
                }
#pragma unroll
                for (int nj = 0; nj < 4; ++nj) {
                    // Column n = warp_n * 64 + nj * 16 + (lane / 16) * 8 lies in box warp_n.
                    const int krow = ks * 16 + lane % 16, chunk = nj * 2 + lane / 16;
                    const unsigned p = bs + krow * 128 + ((chunk ^ (krow & 7)) << 4);
                    asm volatile(
                        "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                        : "=r"(b[2 * nj][0]), "=r"(b[2 * nj][1]), "=r"(b[2 * nj + 1][0]),
                          "=r"(b[2 * nj + 1][1])
                        : "r"(p));
                }
#pragma unroll
                for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                    for (int n = 0; n < 8; ++n)
                        asm volatile(
                            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                            "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                            : "+f"(acc[mi][n][0]), "+f"(acc[mi][n][1]), "+f"(acc[mi][n][2]),
                              "+f"(acc[mi][n][3])
                            : "r"(a[mi][0]), "r"(a[mi][1]), "r"(a[mi][2]), "r"(a[mi][3]),
                              "r"(b[n][0]), "r"(b[n][1]));
            }
            __syncwarp();
            if (lane == 0)
                for (unsigned r = 0; r < CLUSTER; ++r) mbar_arrive_in(smem_addr(&empty[s]), r);
        }

#pragma unroll
        for (int mi = 0; mi < 4; ++mi)
#pragma unroll
            for (int n = 0; n < 8; ++n) {
                int r = bm + warp_m * 64 + mi * 16 + lane / 4;
                int c = bn + warp_n * 64 + n * 8 + (lane % 4) * 2;
                *reinterpret_cast<float2*>(&C[(size_t)r * N + c]) =
                    make_float2(acc[mi][n][0], acc[mi][n][1]);
                *reinterpret_cast<float2*>(&C[(size_t)(r + 8) * N + c]) =
                    make_float2(acc[mi][n][2], acc[mi][n][3]);
            }
    }
#if MCAST
    cluster_sync();  // no block leaves while its partner may still write into it or arrive on it
#endif
}
