"""What does another compiler's mma.sync GEMM reach on this GPU (issue 25's bar)? Triton compiles
tl.dot to Hopper's wgmma unless DISABLE_MMA_V3=1, in which case it emits Ampere's mma.sync
(its "MMA v2") with its own software pipeline (cp.async, num_stages buffers) and shared layouts.
This times Triton's mma.sync GEMM over a set of block shapes, stages and warps (fp16 in, fp32
accumulation and output) against tessel's tutorial 07 step 6, cuBLAS and the register-only
mma.sync peak, in interleaved rounds in one process, each kernel checked against a float64
product first and its PTX checked for mma.sync (and no wgmma).

    python3 benchmarks/experiments/hgemm_triton_mma_v2.py [--wide] [ROUNDS] [N ...]
                                                            (default 5; 4096 8192)
--wide times WIDE's configurations instead (more stages, warps and k tiles around the best).
"""
import os
import sys

import tessel as ts  # before torch: the process uses tessel's NVRTC
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
import cuda_bench  # noqa: E402
import gemm_fp16_cuda as bench  # noqa: E402
import triton_gemm  # noqa: E402

# (BM, BN, BK, stages, warps): Triton's and CUTLASS's usual Ampere shapes and tessel's.
CONFIGS = [
    (128, 256, 64, 3, 8), (128, 256, 64, 4, 8), (256, 128, 64, 3, 8), (256, 128, 64, 4, 8),
    (128, 256, 32, 4, 8), (128, 128, 64, 4, 4), (128, 128, 64, 3, 8), (128, 128, 32, 4, 4),
    (64, 256, 64, 4, 4), (256, 128, 32, 4, 8),
]

# Around the best of CONFIGS (128 x 128 x 64, 4 warps, two blocks an SM): stages, warps, k tiles,
# narrower blocks (three an SM), and the 8-warp shapes with 3 stages.
WIDE = [
    (128, 128, 64, 3, 4), (128, 128, 64, 4, 4), (128, 128, 64, 5, 4), (128, 128, 128, 3, 4),
    (128, 128, 32, 5, 4), (128, 128, 32, 6, 4), (128, 64, 64, 4, 4), (64, 128, 64, 4, 4),
    (128, 64, 64, 5, 4), (128, 128, 64, 4, 8), (256, 128, 64, 3, 8), (128, 256, 64, 3, 8),
]


def main():
    configs = WIDE if "--wide" in sys.argv[1:] else CONFIGS
    print(f"triton {triton_gemm.triton.__version__}, compiled with DISABLE_MMA_V3=1")

    def kernels(n, a, b):
        s, args = bench.tc.step6(n, n, n)
        f = ts.build(s, args, target="cuda")
        c = torch.empty(n, n, device="cuda")
        out = [("tessel step6", lambda: f(a, b, c), c)]
        for config in configs:
            c6 = torch.empty(n, n, device="cuda")
            try:
                out.append((f"triton {config}",
                            triton_gemm.kernel(n, a, b, c6, config, mma_sync=True), c6))
            except Exception as e:  # a shape Triton refuses (shared memory): said, not timed
                print(f"triton {config}: not built ({type(e).__name__}: {str(e)[:120]})")
        return out

    cuda_bench.fp16_gemm_experiment([x for x in sys.argv[1:] if x != "--wide"], bench.mma_peak,
                                    kernels)

if __name__ == "__main__":
    main()
