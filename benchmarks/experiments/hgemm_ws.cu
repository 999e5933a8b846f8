// An experiment for issue 25's bar (docs/notes/tensorcore.md, "Block order and spread copies"):
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
#include <cuda_fp16.h>

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

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async16(unsigned dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile(
        "{\n .reg .b64 state;\n mbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(bar)
        : "memory");
}

// Returns once the phase of parity `parity` has completed.
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

extern "C" __global__ void __launch_bounds__(32 * (CONSUMERS + PRODUCERS), 1)
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
            mbar_init(smem_addr(&full[s]), 32 * PRODUCERS);
            mbar_init(smem_addr(&empty[s]), CONSUMERS);
        }
    }
    __syncthreads();

    if (warp >= CONSUMERS) {  // a producer
        const int pl = tid - 32 * CONSUMERS;          // its lane among the producers'
        constexpr int A_CHUNKS = BM * BK / 8 / (32 * PRODUCERS);  // 16-byte copies per k tile
        constexpr int B_CHUNKS = BK * BN / 8 / (32 * PRODUCERS) / (HALF_B ? 2 : 1);
        for (int kt = 0; kt < tiles; ++kt) {
            const int s = kt % STAGES, use = kt / STAGES;
            if (use > 0) mbar_wait(smem_addr(&empty[s]), (use - 1) & 1);
            const int k0 = kt * BK;
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
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(
                             smem_addr(&full[s]))
                         : "memory");
        }
        asm volatile("cp.async.wait_all;\n" ::: "memory");
        return;
    }

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
        const half* as = As + s * A_STAGE;
        const half* bs = Bs + s * B_STAGE;
#pragma unroll
        for (int ks = 0; ks < BK / 16; ++ks) {
            unsigned a[4][4], b[8][2];
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
        if (lane == 0) mbar_arrive(smem_addr(&empty[s]));
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
