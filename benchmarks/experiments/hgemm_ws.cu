// An experiment for issue 25's bar (docs/perf/tensor-cores.md, "What limits it"):
// hgemm_l2_bound.cu's kernel with warp specialisation. One producer warp copies the tiles and 8
// consumer warps multiply them; instead of a block barrier per k tile, each stage has two
// mbarriers: `full` (the producer's 32 lanes arrive through cp.async.mbarrier.arrive.noinc when
// their copies have landed) and `empty` (each consumer warp arrives once it has read the stage).
// PRODUCERS warps copy (1: 288 threads, at most 224 registers a thread; 4: 384 threads, 168).
//
// C[M][N] (fp32) = A[M][K] * B[K][N] (fp16, row-major): 128 x 256 block tiles, 8 consumer
// warps as 2 x 4 warp tiles of 64 x 64, k tiles of BK in STAGES padded shared buffers, ldmatrix
// (.trans for B), mma.sync m16n8k16 with fp32 accumulators.
//
// HALF_B=1 is not a correct GEMM (as in hgemm_l2_bound.cu): the producer copies only the first
// half of B's tile, the L2 -> SM bytes of two blocks of a cluster sharing B's tile by multicast.
// With warp specialisation it bounds what both levers together could give.
//
// BULK=1: the producers copy whole rows with cp.async.bulk (one instruction a row of a tile, 128
// or 512 bytes), each signalling the stage's `full` mbarrier by bytes (complete_tx); the first
// producer lane announces the stage's bytes (arrive.expect_tx), the barrier's one arrival.
// MCAST=1 (with BULK): clusters of two blocks along M (the same B tile): each block's producers
// copy their own A tile and half of B's rows, multicast into both blocks; `full` expects the
// whole B tile, and `empty` counts both blocks' consumer warps (remote arrives through mapa), so
// that neither producer overwrites a stage its partner still reads. The real version of HALF_B.

#ifndef STAGES
#define STAGES 4
#endif
#ifndef BK
#define BK 64
#endif
#ifndef HALF_B
#define HALF_B 0
#endif

#define BM 128
#define BN 256
#define AS (BK + 8)
#define BS (BN + 8)
#define A_STAGE (BM * AS)
#define B_STAGE (BK * BS)
#define CONSUMERS 8
#ifndef PRODUCERS
#define PRODUCERS 1
#endif
#ifndef BULK
#define BULK 0
#endif
#ifndef MCAST
#define MCAST 0
#endif
#if MCAST && (!BULK || HALF_B)
#error "MCAST needs BULK and no HALF_B"
#endif
#define CLUSTER (MCAST ? 2 : 1)
#include "hgemm_common.cuh"

// A row of `bytes` from global memory into shared memory at `dst` (this block's address), and
// with MCAST into the same place in every block of the cluster; complete_tx on `bar` there.
__device__ __forceinline__ void bulk_row(unsigned dst, const void* src, unsigned bytes,
                                         unsigned bar, bool multicast) {
    if (multicast)
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
            "[%0], [%1], %2, [%3], %4;\n" ::"r"(dst),
            "l"(src), "r"(bytes), "r"(bar), "h"((unsigned short)((1 << CLUSTER) - 1))
            : "memory");
    else
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
            "[%3];\n" ::"r"(dst),
            "l"(src), "r"(bytes), "r"(bar)
            : "memory");
}

extern "C" __global__ void CLUSTER_DIMS __launch_bounds__(32 * (CONSUMERS + PRODUCERS), 1)
hgemm(const half* __restrict__ A, const half* __restrict__ B, float* __restrict__ C, int M,
      int N, int K) {
    extern __shared__ __align__(16) half smem[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    half* As = smem;                     // [STAGES][BM][AS]
    half* Bs = smem + STAGES * A_STAGE;  // [STAGES][BK][BS]

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const int tiles = K / BK;
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(smem_addr(&full[s]), BULK ? 1 : 32 * PRODUCERS);
            mbar_init(smem_addr(&empty[s]), CONSUMERS * CLUSTER);
        }
    }
#if MCAST
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    cluster_sync();
    const unsigned rank = cluster_rank();
#else
    __syncthreads();
#endif

    if (warp >= CONSUMERS) {  // a producer
        const int pl = tid - 32 * CONSUMERS;  // its lane among the producers'
        for (int kt = 0; kt < tiles; ++kt) {
            const int s = kt % STAGES, use = kt / STAGES;
            if (use > 0) mbar_wait(smem_addr(&empty[s]), (use - 1) & 1);
            const int k0 = kt * BK;
            const unsigned full_s = smem_addr(&full[s]);
#if BULK
            // Rows of B this block copies (with MCAST, into both blocks).
            constexpr int B_ROWS = BK / (HALF_B || MCAST ? 2 : 1);
            constexpr unsigned BYTES = (BM * BK + (HALF_B ? BK / 2 : BK) * BN) * 2;
            if (pl == 0) mbar_expect_tx(full_s, BYTES);
            for (int r = pl; r < BM; r += 32 * PRODUCERS)
                bulk_row(smem_addr(As + s * A_STAGE + r * AS), A + (size_t)(bm + r) * K + k0,
                         BK * 2, full_s, false);
            for (int i = pl; i < B_ROWS; i += 32 * PRODUCERS) {
#if MCAST
                const int r = rank * B_ROWS + i;
#else
                const int r = i;
#endif
                bulk_row(smem_addr(Bs + s * B_STAGE + r * BS), B + (size_t)(k0 + r) * N + bn,
                         BN * 2, full_s, MCAST);
            }
#else
            constexpr int A_CHUNKS = BM * BK / 8 / (32 * PRODUCERS);  // 16-byte copies a lane
            constexpr int B_CHUNKS = BK * BN / 8 / (32 * PRODUCERS) / (HALF_B ? 2 : 1);
#pragma unroll 8
            for (int i = 0; i < A_CHUNKS; ++i) {
                int c = pl + i * 32 * PRODUCERS, r = c / (BK / 8), col = (c % (BK / 8)) * 8;
                cp_async16(smem_addr(As + s * A_STAGE + r * AS + col),
                           A + (size_t)(bm + r) * K + k0 + col);
            }
#pragma unroll 8
            for (int i = 0; i < B_CHUNKS; ++i) {
                int c = pl + i * 32 * PRODUCERS, r = c / 32, col = (c % 32) * 8;
                cp_async16(smem_addr(Bs + s * B_STAGE + r * BS + col),
                           B + (size_t)(k0 + r) * N + bn + col);
            }
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(full_s)
                         : "memory");
#endif
        }
#if !BULK
        asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
    } else {
        const int warp_m = warp / 4, warp_n = warp % 4;
        float acc[4][8][4];
        zero_warp_tile(acc);

        for (int kt = 0; kt < tiles; ++kt) {
            const int s = kt % STAGES, use = kt / STAGES;
            mbar_wait(smem_addr(&full[s]), use & 1);
            const half* as = As + s * A_STAGE;
            const half* bs = Bs + s * B_STAGE;
#pragma unroll
            for (int ks = 0; ks < BK / 16; ++ks) {
                unsigned a[4][4], b[8][2];
                load_padded_fragments(a, b, as, AS, bs, BS, ks, warp_m, warp_n, lane);
                mma_warp_tile(acc, a, b);
            }
            __syncwarp();
#if MCAST
            if (lane == 0)
                for (unsigned r = 0; r < CLUSTER; ++r) mbar_arrive_in(smem_addr(&empty[s]), r);
#else
            if (lane == 0) mbar_arrive(smem_addr(&empty[s]));
#endif
        }

        store_warp_tile(C, N, bm + warp_m * 64, bn + warp_n * 64, lane, acc);
    }
#if MCAST
    cluster_sync();  // no block leaves while its partner may still write into it or arrive on it
#endif
}
