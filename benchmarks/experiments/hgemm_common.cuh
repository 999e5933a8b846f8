// What the hand-written fp16 GEMM experiments (hgemm_l2_bound.cu, hgemm_ws.cu, hgemm_tma.cu)
// share: shared-memory addresses, cp.async, mbarriers and clusters, and the warp's 64 x 64 tile
// of mma.sync m16n8k16 (fp16 in, fp32 accumulators): its fragment loads, multiplies and stores.
#pragma once
#include <cuda_fp16.h>

// Clusters of two blocks along M where the including file sets MCAST.
#if defined(MCAST) && MCAST
#define CLUSTER_DIMS __cluster_dims__(1, 2, 1)
#else
#define CLUSTER_DIMS
#endif

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async16(unsigned dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile(
        "{\n .reg .b64 state;\n mbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(bar)
        : "memory");
}

// The arrival of this thread with `bytes` more expected (complete_tx) in the current phase.
__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile(
        "{\n .reg .b64 state;\n mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}\n" ::
            "r"(bar),
        "r"(bytes)
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

// Arrives on the mbarrier at this block's shared address `bar` in block `rank` of the cluster.
__device__ __forceinline__ void mbar_arrive_in(unsigned bar, unsigned rank) {
    asm volatile(
        "{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
        " mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
        "r"(rank)
        : "memory");
}

__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

__device__ __forceinline__ void cluster_sync() {
    asm volatile(
        "barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::
            : "memory");
}

// A's 16 x 16 fragment (ldmatrix x4) from this lane's row address.
__device__ __forceinline__ void ldmatrix_a(unsigned (&a)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                 : "r"(addr));
}

// Two of B's 16 x 8 fragments (16 columns) of a k-major tile (ldmatrix x4 .trans).
__device__ __forceinline__ void ldmatrix_b2(unsigned (&b0)[2], unsigned (&b1)[2], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(b0[0]), "=r"(b0[1]), "=r"(b1[0]), "=r"(b1[1])
                 : "r"(addr));
}

// A warp's fragments of one 16-deep k step from padded tiles: A's row-major (rows of a_stride
// halves), B's k-major (rows of b_stride); the warp's 64 x 64 tile at (warp_m, warp_n).
__device__ __forceinline__ void load_padded_fragments(unsigned (&a)[4][4], unsigned (&b)[8][2],
                                                      const half* as, int a_stride,
                                                      const half* bs, int b_stride, int ks,
                                                      int warp_m, int warp_n, int lane) {
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
        ldmatrix_a(a[mi], smem_addr(as + (warp_m * 64 + mi * 16 + lane % 16) * a_stride +
                                    ks * 16 + (lane / 16) * 8));
#pragma unroll
    for (int nj = 0; nj < 4; ++nj)
        ldmatrix_b2(b[2 * nj], b[2 * nj + 1],
                    smem_addr(bs + (ks * 16 + lane % 16) * b_stride + warp_n * 64 + nj * 16 +
                              (lane / 16) * 8));
}

// The warp's 64 x 64 tile += its fragments of one 16-deep k step: 4 x 8 mma.sync.
__device__ __forceinline__ void mma_warp_tile(float (&acc)[4][8][4], const unsigned (&a)[4][4],
                                              const unsigned (&b)[8][2]) {
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int n = 0; n < 8; ++n)
            asm volatile(
                "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                : "+f"(acc[mi][n][0]), "+f"(acc[mi][n][1]), "+f"(acc[mi][n][2]),
                  "+f"(acc[mi][n][3])
                : "r"(a[mi][0]), "r"(a[mi][1]), "r"(a[mi][2]), "r"(a[mi][3]), "r"(b[n][0]),
                  "r"(b[n][1]));
}

__device__ __forceinline__ void zero_warp_tile(float (&acc)[4][8][4]) {
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int v = 0; v < 4; ++v) acc[i][j][v] = 0.f;
}

// The warp's 64 x 64 tile of C at (row0, col0), in the accumulators' fragment layout.
__device__ __forceinline__ void store_warp_tile(float* C, int N, int row0, int col0, int lane,
                                                const float (&acc)[4][8][4]) {
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int n = 0; n < 8; ++n) {
            int r = row0 + mi * 16 + lane / 4;
            int c = col0 + n * 8 + (lane % 4) * 2;
            *reinterpret_cast<float2*>(&C[(size_t)r * N + c]) =
                make_float2(acc[mi][n][0], acc[mi][n][1]);
            *reinterpret_cast<float2*>(&C[(size_t)(r + 8) * N + c]) =
                make_float2(acc[mi][n][2], acc[mi][n][3]);
        }
}
