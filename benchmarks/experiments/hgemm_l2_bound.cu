// An experiment for issue 25's bar (docs/perf/tensor-cores.md, "What limits it"): is the
// mma.sync fp16 GEMM bound by L2 -> SM traffic, so that sharing tiles between the blocks of a
// cluster (TMA multicast, distributed shared memory) is what the bar needs? Written by hand,
// outside tessel, launched through the driver by hgemm_l2_bound.py next to cuBLAS.
//
// C[M][N] (fp32) = A[M][K] * B[K][N] (fp16, row-major). Tutorial 07's structure: a block of 256
// threads computes a 128 x 256 tile, 8 warps as 2 (rows) x 4 (columns) warp tiles of 64 x 64;
// k tiles of 32 copied by cp.async (16 bytes) into STAGES shared buffers (rows padded by 8
// halves), fragments by ldmatrix (.trans for B), mma.sync m16n8k16 with fp32 accumulators; each
// iteration waits for its tile, passes one barrier, computes, then issues the fetch STAGES - 1
// tiles ahead into the buffer it has just finished with.
//
// HALF_B=1 is not a correct GEMM: each block copies only the first half of B's tile (rows 0-15
// of each k tile) and computes on whatever the other half of the buffer holds, as if the block
// beside it in a cluster of two had multicast that half. Its speed bounds what sharing B's tile
// between two blocks could give (the L2 -> SM bytes per FLOP fall from 1/85 to 1/128).
// NO_FETCH=1 (not a GEMM either) copies only the first STAGES - 1 tiles and then computes on
// them over and over: the speed of the shared -> tensor core part alone. NO_SYNC=1 (with
// NO_FETCH) also leaves out the wait and the barrier of every k tile after those first ones:
// ldmatrix and mma.sync alone.
//
// Two changes of the mainloop that keep it a GEMM (tessel's pipelined loop has neither):
// INTERLEAVE=1 spreads the fetch of tile kt + STAGES - 1 over the BK / 16 mma steps of tile kt
// (a share of the cp.async copies before each step's mma.syncs, CUTLASS's multistage order)
// instead of issuing all of them after the last step; FRAG_DB=1 double-buffers the fragments
// across the mma steps of a tile (step ks + 1's ldmatrix before step ks's mma.syncs).
#include "hgemm_common.cuh"

#ifndef STAGES
#define STAGES 4
#endif
#ifndef HALF_B
#define HALF_B 0
#endif
#ifndef NO_FETCH
#define NO_FETCH 0
#endif
#ifndef NO_SYNC
#define NO_SYNC 0
#endif
#ifndef INTERLEAVE
#define INTERLEAVE 0
#endif
#ifndef FRAG_DB
#define FRAG_DB 0
#endif

#define BM 128
#define BN 256
#ifndef BK
#define BK 32
#endif
#define AS (BK + 8)  // A's row stride in shared memory (halves)
#define BS (BN + 8)  // B's row stride in shared memory (halves)
#define A_STAGE (BM * AS)
#define B_STAGE (BK * BS)

extern "C" __global__ void __launch_bounds__(256, 1)
hgemm(const half* __restrict__ A, const half* __restrict__ B, float* __restrict__ C, int M,
      int N, int K) {
    extern __shared__ __align__(16) half smem[];
    half* As = smem;                      // [STAGES][BM][AS]
    half* Bs = smem + STAGES * A_STAGE;   // [STAGES][BK][BS]

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int warp_m = warp / 4, warp_n = warp % 4;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const int tiles = K / BK;

    constexpr int A_CHUNKS = BM * BK / 8 / 256;  // A: 128 rows x BK / 8 chunks of 8 halves
    constexpr int B_CHUNKS = BK * BN / 8 / 256 / (HALF_B ? 2 : 1);  // B: BK x 32 chunks
    // The copies of part `part` of `parts` of tile kt into buffer `stage`.
    auto fetch_part = [&](int stage, int kt, int part, int parts) {
        const int k0 = kt * BK;
#pragma unroll
        for (int i = part * A_CHUNKS / parts; i < (part + 1) * A_CHUNKS / parts; ++i) {
            int c = tid + i * 256, r = c / (BK / 8), col = (c % (BK / 8)) * 8;
            cp_async16(smem_addr(As + stage * A_STAGE + r * AS + col),
                       A + (size_t)(bm + r) * K + k0 + col);
        }
#pragma unroll
        for (int i = part * B_CHUNKS / parts; i < (part + 1) * B_CHUNKS / parts; ++i) {
            int c = tid + i * 256, r = c / 32, col = (c % 32) * 8;
            cp_async16(smem_addr(Bs + stage * B_STAGE + r * BS + col),
                       B + (size_t)(k0 + r) * N + bn + col);
        }
    };
    auto fetch = [&](int stage, int kt) { fetch_part(stage, kt, 0, 1); };

    float acc[4][8][4];
    zero_warp_tile(acc);

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) fetch(s, s);
        asm volatile("cp.async.commit_group;\n" ::);
    }

    for (int kt = 0; kt < tiles; ++kt) {
        if (!NO_SYNC || kt < STAGES - 1) {
            asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
            __syncthreads();
        }
        const int stage = kt % STAGES;
        const half* as = As + stage * A_STAGE;
        const half* bs = Bs + stage * B_STAGE;
        // The buffer of tile kt - 1 is free: every thread passed this iteration's barrier after
        // computing on it.
        const bool fetching = !NO_FETCH && kt + STAGES - 1 < tiles;
        auto load_frags = [&](int ks, unsigned (&a)[4][4], unsigned (&b)[8][2]) {
            load_padded_fragments(a, b, as, AS, bs, BS, ks, warp_m, warp_n, lane);
        };
#if FRAG_DB
        unsigned a[2][4][4], b[2][8][2];
        load_frags(0, a[0], b[0]);
#endif
#pragma unroll
        for (int ks = 0; ks < BK / 16; ++ks) {
#if FRAG_DB
            if (ks + 1 < BK / 16) load_frags(ks + 1, a[(ks + 1) & 1], b[(ks + 1) & 1]);
#else
            unsigned a[1][4][4], b[1][8][2];
            load_frags(ks, a[0], b[0]);
#endif
#if INTERLEAVE
            if (fetching) fetch_part((kt + STAGES - 1) % STAGES, kt + STAGES - 1, ks, BK / 16);
#endif
            mma_warp_tile(acc, a[FRAG_DB ? ks & 1 : 0], b[FRAG_DB ? ks & 1 : 0]);
        }
#if !INTERLEAVE
        if (fetching) fetch((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
#endif
        asm volatile("cp.async.commit_group;\n" ::);
    }

    store_warp_tile(C, N, bm + warp_m * 64, bn + warp_n * 64, lane, acc);
}
