"""A Triton fp16 GEMM (fp32 accumulation and output) as a reference for the tensor-core benchmarks:
compiled to Hopper's wgmma (Triton's default on sm_90) or, with mma_sync=True, to Ampere's
mma.sync (DISABLE_MMA_V3=1 while it compiles: Triton's "MMA v2"), the PTX checked for the one
asked. Each configuration is (BM, BN, BK, num_stages, num_warps); blocks are ordered GROUP block
rows at a time (L2 reuse). Needs triton (the GPU host has it); `available()` says whether it does.
"""
import os

import torch

import cuda_bench

try:
    import triton
    import triton.language as tl
except ImportError:  # the benchmarks say so and go on without this reference
    triton = None

# Triton's and CUTLASS's usual shapes; the best of them for each instruction on the H200
# (docs/perf/tensor-cores.md): mma.sync 128 x 128 x 64, 4 stages, 4 warps (two blocks an SM).
MMA_SYNC_CONFIGS = [(128, 128, 64, 4, 4), (128, 128, 32, 5, 4), (256, 128, 64, 3, 8)]
WGMMA_CONFIGS = [(128, 256, 64, 3, 8), (128, 256, 64, 4, 8), (256, 128, 64, 3, 8),
                 (128, 128, 64, 4, 4)]


def available():
    return triton is not None


if triton is not None:
    @triton.jit
    def matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               GROUP: tl.constexpr, MMA_V2: tl.constexpr):
        """c[M, N] (float32) = a[M, K] @ b[K, N] (float16, row-major), M, N, K multiples of the
        block. MMA_V2 only keys Triton's in-process cache apart (DISABLE_MMA_V3 is read at
        compile time, not part of that key)."""
        pid = tl.program_id(0)
        blocks_n = N // BN
        per_group = GROUP * blocks_n
        first_m = (pid // per_group) * GROUP
        rows = min(M // BM - first_m, GROUP)
        pid_m = first_m + (pid % per_group) % rows
        pid_n = (pid % per_group) // rows
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        pa = a + rm[:, None] * K + rk[None, :]
        pb = b + rk[:, None] * N + rn[None, :]
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for _ in range(0, K, BK):
            acc = tl.dot(tl.load(pa), tl.load(pb), acc)
            pa += BK
            pb += BK * N
        tl.store(c + rm[:, None] * N + rn[None, :], acc)


def kernel(n, a, b, out, config, mma_sync, group=8, verbose=True):
    """A run() that writes a @ b into out with the configuration; compiled and checked for its
    instruction (an AssertionError otherwise) before it is returned."""
    bm, bn, bk, stages, warps = config
    grid = ((n // bm) * (n // bn),)

    def run():
        return matmul[grid](a, b, out, n, n, n, BM=bm, BN=bn, BK=bk, GROUP=group,
                            MMA_V2=mma_sync, num_stages=stages, num_warps=warps)

    saved = os.environ.get("DISABLE_MMA_V3")
    os.environ["DISABLE_MMA_V3"] = "1" if mma_sync else "0"
    try:
        compiled = run()
    finally:
        if saved is None:
            del os.environ["DISABLE_MMA_V3"]
        else:
            os.environ["DISABLE_MMA_V3"] = saved
    ptx = compiled.asm["ptx"]
    if mma_sync:
        assert "mma.sync" in ptx and "wgmma" not in ptx, f"{config}: not an mma.sync kernel"
    else:
        assert "wgmma" in ptx, f"{config}: not a wgmma kernel"
    if verbose:
        print(f"triton {'mma.sync' if mma_sync else 'wgmma'} {config}: {compiled.n_regs} "
              f"registers, {compiled.n_spills} spills, {compiled.metadata.shared} bytes of "
              f"shared memory, {ptx.count('mma.sync')} mma.sync, {ptx.count('wgmma.mma_async')} "
              f"wgmma and {ptx.count('ldmatrix')} ldmatrix in the PTX")
    return run


def best(n, a, b, ref, mma_sync, configs=None):
    """(GFLOP/s, configuration, relative error) of the fastest configuration (median_ms each),
    every one checked against ref first (relative error below 1e-4)."""
    configs = configs or (MMA_SYNC_CONFIGS if mma_sync else WGMMA_CONFIGS)
    found = None
    for config in configs:
        out = torch.full((n, n), float("nan"), device="cuda")
        run = kernel(n, a, b, out, config, mma_sync, verbose=False)
        err = cuda_bench.relative_error(out, ref)
        assert err < 1e-4, f"triton {config} is wrong: {err}"
        gflops = 2.0 * n**3 / cuda_bench.median_ms(run) / 1e6
        if found is None or gflops > found[0]:
            found = (gflops, config, err)
    return found
