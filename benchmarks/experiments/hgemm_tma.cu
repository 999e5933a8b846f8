// An experiment for issue 25's bar (docs/perf/tensor-cores.md, "What limits it"):
// hgemm_ws.cu with the tiles copied by the Tensor Memory Accelerator. One producer thread issues
// a stage's copies (A's 128 x 64 tile as one box, B's 64 x 256 tile as four boxes of 64 x 64:
// a 128-byte swizzled box is at most 128 bytes wide) with cp.async.bulk.tensor, which signal the
// stage's `full` mbarrier by bytes; 8 consumer warps multiply (ldmatrix on the 128-byte swizzled
// layout the copies write: the 16-byte chunk c of a 128-byte row r at chunk c ^ (r % 8)) and
// arrive on `empty`. MCAST=1: clusters of two blocks along M, each block copying two of B's
// four boxes into both blocks (.multicast::cluster), `empty` counting both blocks' consumers.
// The tensor maps (cuTensorMapEncodeTiled) are kernel parameters: hgemm_l2_bound.py makes them.
#include <cuda.h>

#ifndef STAGES
#define STAGES 4
#endif
#ifndef MCAST
#define MCAST 0
#endif
#define CLUSTER (MCAST ? 2 : 1)
#include "hgemm_common.cuh"
#define BM 128
#define BN 256
#define BK 64
#define CONSUMERS 8
#define A_BYTES (BM * BK * 2)  // one stage's A tile: 16 KB
#define B_BYTES (BK * BN * 2)  // 32 KB, four boxes of 8 KB

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
        zero_warp_tile(acc);

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
                    ldmatrix_a(a[mi], as + row * 128 + ((chunk ^ (row & 7)) << 4));
                }
#pragma unroll
                for (int nj = 0; nj < 4; ++nj) {
                    // Column n = warp_n * 64 + nj * 16 + (lane / 16) * 8 lies in box warp_n.
                    const int krow = ks * 16 + lane % 16, chunk = nj * 2 + lane / 16;
                    ldmatrix_b2(b[2 * nj], b[2 * nj + 1],
                                bs + krow * 128 + ((chunk ^ (krow & 7)) << 4));
                }
                mma_warp_tile(acc, a, b);
            }
            __syncwarp();
            if (lane == 0)
                for (unsigned r = 0; r < CLUSTER; ++r) mbar_arrive_in(smem_addr(&empty[s]), r);
        }

        store_warp_tile(C, N, bm + warp_m * 64, bn + warp_n * 64, lane, acc);
    }
#if MCAST
    cluster_sync();  // no block leaves while its partner may still write into it or arrive on it
#endif
}
