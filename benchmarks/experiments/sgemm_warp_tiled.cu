// An experiment for issue 19's GPU bar (docs/perf/gpu-gemm-search.md): is there a SIMT fp32
// GEMM structure faster than tutorial 05's step 6 on this GPU? Written by hand, outside tessel,
// launched through the driver by sgemm_warp_tiled.py next to cuBLAS.
//
// C[M][N] = A[M][K] * B[K][N], row-major, M, N multiples of 128 and K of BK. A block of 256
// threads computes a 128 x 128 tile; its 8 warps are 4 (rows) x 2 (columns) warp tiles of
// 32 x 64; a warp's lanes are 4 x 8, each computing 8 x 8 outputs as 2 x 2 sub-tiles of 4 x 4
// (strided by 16 rows and 32 columns), so a warp's 128-bit shared reads touch 64 bytes of A's
// tile and 128 bytes of B's: one wavefront each. A's tile is stored transposed ([k][m], rows
// padded by 4 floats). Shared tiles are double-buffered through registers (one barrier per k
// tile). REG_DB=1 also double-buffers the register fragments across the k steps of a tile: the
// next step's fragments load while this step's 64 FMAs run (CUTLASS's SIMT mainloop).
//
// A_KMAJOR=1 keeps A's tile as it is in memory ([m][k], no padding: with BK = 8 a row is 32 bytes
// and neither the 128-bit stores nor the reads conflict) and reads a thread's 8 rows KV k steps
// at a time (KV-wide vector loads: 8 of them per KV steps, where the transposed tile takes 2 a
// step). Nothing is transposed, so the tiles can be copied with 16-byte cp.async: STAGES=S
// (>= 2, needs A_KMAJOR) pipelines the copies over S shared buffers (wait, barrier, compute,
// then the copy of tile t + S - 1; FETCH_FIRST=1 copies before computing), no register staging.
// Does that structure (what tessel's pipeline(n) states would be with A kept, not transposed)
// reach step 6's speed? Then the tuner's pipelined basin could.
#ifndef BK
#define BK 8
#endif
#ifndef REG_DB
#define REG_DB 1
#endif
#ifndef STEP6_MAP
#define STEP6_MAP 0
#endif
#ifndef A_KMAJOR
#define A_KMAJOR 0
#endif
#ifndef KV  // k steps per vector read of A's fragment (A_KMAJOR)
#define KV 4
#endif
#ifndef STAGES  // 0: shared tiles double-buffered through registers; >= 2: cp.async stages
#define STAGES 0
#endif
#ifndef FETCH_FIRST
#define FETCH_FIRST 0
#endif
#if STAGES && !A_KMAJOR
#error "STAGES needs A_KMAJOR (a cp.async cannot transpose)"
#endif
#if A_KMAJOR && REG_DB
#error "A_KMAJOR reads fragments KV steps at a time: build it with REG_DB=0"
#endif
#ifndef MINB  // blocks per SM asked of ptxas (2: at most 128 registers; 0: no launch bounds)
#define MINB 2
#endif

#define BM 128
#define BN 128
#define APAD 4

#if MINB
#define BOUNDS __launch_bounds__(256, MINB)
#else
#define BOUNDS
#endif
// A thread's 8 x 8 outputs, 2 x 2 parts of 4 x 4 strided by rs rows and cs columns, into C at
// (r0, c0).
__device__ __forceinline__ void store_tile(float* C, int N, int r0, int c0, int rs, int cs,
                                          float (&acc)[8][8]) {
#pragma unroll
    for (int sm = 0; sm < 2; ++sm)
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int sn = 0; sn < 2; ++sn) {
                int r = r0 + sm * rs + i, c = c0 + sn * cs;
                float* a = acc[sm * 4 + i] + sn * 4;
                *reinterpret_cast<float4*>(&C[(size_t)r * N + c]) =
                    make_float4(a[0], a[1], a[2], a[3]);
            }
}

#if !A_KMAJOR
extern "C" __global__ void BOUNDS
sgemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
      int N, int K) {
    __shared__ __align__(16) float As[2][BK][BM + APAD];
    __shared__ __align__(16) float Bs[2][BK][BN];

    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int warp_m = warp / 2, warp_n = warp % 2;        // 4 x 2 warps
    const int lane_m = lane / 8, lane_n = lane % 8;        // 4 x 8 lanes
#if STEP6_MAP  // tutorial 05 step 6's mapping: 16 x 16 threads, 4 x 4 parts strided by 64
    constexpr int RS = 64, CS = 64;
    const int row0 = (tid / 16) * 4, col0 = (tid % 16) * 4;
#else
    constexpr int RS = 16, CS = 32;
    const int row0 = warp_m * 32 + lane_m * 4;             // + RS * sub_m + i
    const int col0 = warp_n * 64 + lane_n * 4;             // + CS * sub_n + j
#endif
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;

    // Global -> register fetch of one k tile: A 128 x BK, B BK x 128, float4 each.
    constexpr int A_LOADS = BM * BK / 4 / 256;  // float4 per thread
    constexpr int B_LOADS = BK * BN / 4 / 256;
    float4 ra[A_LOADS], rb[B_LOADS];
    auto fetch = [&](int k0) {
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            int idx = tid + l * 256;            // float4 index in the tile
            int r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;
            ra[l] = *reinterpret_cast<const float4*>(&A[(size_t)(bm + r) * K + k0 + c]);
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            int idx = tid + l * 256;
            int r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;
            rb[l] = *reinterpret_cast<const float4*>(&B[(size_t)(k0 + r) * N + bn + c]);
        }
    };
    auto store = [&](int buf) {
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            int idx = tid + l * 256;
            int r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;
            As[buf][c + 0][r] = ra[l].x;
            As[buf][c + 1][r] = ra[l].y;
            As[buf][c + 2][r] = ra[l].z;
            As[buf][c + 3][r] = ra[l].w;
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            int idx = tid + l * 256;
            int r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;
            *reinterpret_cast<float4*>(&Bs[buf][r][c]) = rb[l];
        }
    };

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

    auto load_frag = [&](int buf, int kk, float* a, float* b) {
        *reinterpret_cast<float4*>(a + 0) = *reinterpret_cast<const float4*>(&As[buf][kk][row0]);
        *reinterpret_cast<float4*>(a + 4) =
            *reinterpret_cast<const float4*>(&As[buf][kk][row0 + RS]);
        *reinterpret_cast<float4*>(b + 0) = *reinterpret_cast<const float4*>(&Bs[buf][kk][col0]);
        *reinterpret_cast<float4*>(b + 4) =
            *reinterpret_cast<const float4*>(&Bs[buf][kk][col0 + CS]);
    };
    auto fma_frag = [&](const float* a, const float* b) {
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    };

    fetch(0);
    store(0);
    __syncthreads();
    const int tiles = K / BK;
    // The last k tile is peeled: no branch in the loop (as tessel's double_buffer lowers it).
#if REG_DB
    float fa[2][8], fb[2][8];
    load_frag(0, 0, fa[0], fb[0]);
    auto compute = [&](int buf) {
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            if (kk + 1 < BK) load_frag(buf, kk + 1, fa[(kk + 1) & 1], fb[(kk + 1) & 1]);
            fma_frag(fa[kk & 1], fb[kk & 1]);
        }
    };
#else
    auto compute = [&](int buf) {
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a[8], b[8];
            load_frag(buf, kk, a, b);
            fma_frag(a, b);
        }
    };
#endif
    for (int t = 0; t < tiles - 1; ++t) {
        const int buf = t & 1;
        fetch((t + 1) * BK);
        compute(buf);
        store(buf ^ 1);
        __syncthreads();
#if REG_DB
        load_frag(buf ^ 1, 0, fa[0], fb[0]);
#endif
    }
    compute((tiles - 1) & 1);

    store_tile(C, N, bm + row0, bn + col0, RS, CS, acc);
}
#else  // A_KMAJOR
extern "C" __global__ void BOUNDS
sgemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
      int N, int K) {
    constexpr int NBUF = STAGES ? STAGES : 2;
    __shared__ __align__(16) float As[NBUF][BM][BK];
    __shared__ __align__(16) float Bs[NBUF][BK][BN];

    const int tid = threadIdx.x;
#if STEP6_MAP
    constexpr int RS = 64, CS = 64;
    const int row0 = (tid / 16) * 4, col0 = (tid % 16) * 4;
#else
    const int warp = tid / 32, lane = tid % 32;
    const int warp_m = warp / 2, warp_n = warp % 2, lane_m = lane / 8, lane_n = lane % 8;
    constexpr int RS = 16, CS = 32;
    const int row0 = warp_m * 32 + lane_m * 4, col0 = warp_n * 64 + lane_n * 4;
#endif
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    constexpr int A_LOADS = BM * BK / 4 / 256, B_LOADS = BK * BN / 4 / 256;
    auto a_src = [&](int l, int k0, int& r, int& c) {
        int idx = tid + l * 256;
        r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;
        return &A[(size_t)(bm + r) * K + k0 + c];
    };
    auto b_src = [&](int l, int k0, int& r, int& c) {
        int idx = tid + l * 256;
        r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;
        return &B[(size_t)(k0 + r) * N + bn + c];
    };

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

    auto compute = [&](int buf) {
#pragma unroll
        for (int kg = 0; kg < BK; kg += KV) {
            float a[8][KV];
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const float* p = &As[buf][row0 + (i / 4) * RS + i % 4][kg];
#if KV == 4
                float4 v = *reinterpret_cast<const float4*>(p);
                a[i][0] = v.x, a[i][1] = v.y, a[i][2] = v.z, a[i][3] = v.w;
#elif KV == 2
                float2 v = *reinterpret_cast<const float2*>(p);
                a[i][0] = v.x, a[i][1] = v.y;
#else
                a[i][0] = *p;
#endif
            }
#pragma unroll
            for (int kq = 0; kq < KV; ++kq) {
                float b[8];
                *reinterpret_cast<float4*>(b + 0) =
                    *reinterpret_cast<const float4*>(&Bs[buf][kg + kq][col0]);
                *reinterpret_cast<float4*>(b + 4) =
                    *reinterpret_cast<const float4*>(&Bs[buf][kg + kq][col0 + CS]);
#pragma unroll
                for (int i = 0; i < 8; ++i)
#pragma unroll
                    for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i][kq], b[j], acc[i][j]);
            }
        }
    };
    const int tiles = K / BK;

#if STAGES
    const float* a_g[A_LOADS];  // this thread's 16-byte pieces of k tile 0
    const float* b_g[B_LOADS];
    unsigned a_s[A_LOADS], b_s[B_LOADS];  // and where they land in buffer 0
#pragma unroll
    for (int l = 0; l < A_LOADS; ++l) {
        int r, c;
        a_g[l] = a_src(l, 0, r, c);
        a_s[l] = static_cast<unsigned>(__cvta_generic_to_shared(&As[0][r][c]));
    }
#pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
        int r, c;
        b_g[l] = b_src(l, 0, r, c);
        b_s[l] = static_cast<unsigned>(__cvta_generic_to_shared(&Bs[0][r][c]));
    }
    auto copy = [&](int t, int buf) {  // cp.async of k tile t into buffer buf, one commit group
        if (t < tiles) {
#pragma unroll
            for (int l = 0; l < A_LOADS; ++l)
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                                 a_s[l] + buf * unsigned(sizeof(As[0]))),
                             "l"(a_g[l] + t * BK));
#pragma unroll
            for (int l = 0; l < B_LOADS; ++l)
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                                 b_s[l] + buf * unsigned(sizeof(Bs[0]))),
                             "l"(b_g[l] + (size_t)t * BK * N));
        }
        asm volatile("cp.async.commit_group;\n" ::);
    };
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) copy(s, s);
    int cur = 0, next = STAGES - 1;  // buffers of tile t and of tile t + STAGES - 1
    for (int t = 0; t < tiles; ++t) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
        __syncthreads();  // tile t landed for every thread; tile t - 1's buffer is free
#if FETCH_FIRST
        copy(t + STAGES - 1, next);
        compute(cur);
#else
        compute(cur);
        copy(t + STAGES - 1, next);
#endif
        cur = cur + 1 == STAGES ? 0 : cur + 1;
        next = next + 1 == STAGES ? 0 : next + 1;
    }
#else  // shared tiles double-buffered through registers, the last k tile peeled
    float4 ra[A_LOADS], rb[B_LOADS];
    auto fetch = [&](int k0) {
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            int r, c;
            ra[l] = *reinterpret_cast<const float4*>(a_src(l, k0, r, c));
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            int r, c;
            rb[l] = *reinterpret_cast<const float4*>(b_src(l, k0, r, c));
        }
    };
    auto store = [&](int buf) {
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            int r, c;
            a_src(l, 0, r, c);
            *reinterpret_cast<float4*>(&As[buf][r][c]) = ra[l];
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            int r, c;
            b_src(l, 0, r, c);
            *reinterpret_cast<float4*>(&Bs[buf][r][c]) = rb[l];
        }
    };
    fetch(0);
    store(0);
    __syncthreads();
    for (int t = 0; t < tiles - 1; ++t) {
        const int buf = t & 1;
        fetch((t + 1) * BK);
        compute(buf);
        store(buf ^ 1);
        __syncthreads();
    }
    compute((tiles - 1) & 1);
#endif

    store_tile(C, N, bm + row0, bn + col0, RS, CS, acc);
}
#endif  // A_KMAJOR
