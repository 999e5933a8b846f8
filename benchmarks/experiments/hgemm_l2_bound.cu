// An experiment for issue 25's bar (docs/notes/tensorcore.md, "Speed on the H100"): is the
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
#include <cuda_fp16.h>

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

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async16(unsigned dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}

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
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int v = 0; v < 4; ++v) acc[i][j][v] = 0.f;

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
#pragma unroll
            for (int mi = 0; mi < 4; ++mi) {
                const half* p = as + (warp_m * 64 + mi * 16 + lane % 16) * AS + ks * 16 +
                                (lane / 16) * 8;
                asm volatile(
                    "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                    : "=r"(a[mi][0]), "=r"(a[mi][1]), "=r"(a[mi][2]), "=r"(a[mi][3])
                    : "r"(smem_addr(p)));
            }
#pragma unroll
            for (int nj = 0; nj < 4; ++nj) {
                const half* p = bs + (ks * 16 + lane % 16) * BS + warp_n * 64 + nj * 16 +
                                (lane / 16) * 8;
                asm volatile(
                    "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                    : "=r"(b[2 * nj][0]), "=r"(b[2 * nj][1]), "=r"(b[2 * nj + 1][0]),
                      "=r"(b[2 * nj + 1][1])
                    : "r"(smem_addr(p)));
            }
        };
        auto mmas = [&](const unsigned (&a)[4][4], const unsigned (&b)[8][2]) {
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
            mmas(a[FRAG_DB ? ks & 1 : 0], b[FRAG_DB ? ks & 1 : 0]);
        }
#if !INTERLEAVE
        if (fetching) fetch((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
#endif
        asm volatile("cp.async.commit_group;\n" ::);
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
