"""Two blocks per SM for tutorial 07's tensor-core GEMM (issue 25's bar)? Triton's fastest
mma.sync GEMM on the H200 (hgemm_triton_mma_v2.py) is 128 x 128 x 64 with 4 warps and 3 shared
buffers: 96 KB and at most 255 registers a thread, so two blocks share an SM and one block's
barriers and waits overlap the other's mma.syncs. This times tessel's step 2 in those shapes
(4 warps of 64 x 64, swizzled tiles, cp.async pipelines of 2-4 buffers, block order groups)
against step 6 (one block of 8 warps per SM), that Triton kernel, cuBLAS and the register-only
mma.sync peak, in interleaved rounds; every kernel checked against a float64 product first.

    python3 benchmarks/experiments/hgemm_two_blocks.py [ROUNDS] [N ...]   (default 5; 4096 8192)
"""
import sys

import hgemm_triton_mma_v2  # noqa: F401 (imports tessel before torch; the support folders)

import tessel as ts
import torch

import cuda_bench
import gemm_fp16_cuda as bench
import triton_gemm

tc = bench.tc

# (label, step2 keywords)
VARIANTS = [
    ("step6 128x256x64 p4", dict(bn=256, bk=64, pipeline=4)),
    ("128x128x64 p3", dict(bk=64, pipeline=3)),
    ("128x128x64 p3 g8", dict(bk=64, pipeline=3, group=8)),
    ("128x128x64 p2 g8", dict(bk=64, pipeline=2, group=8)),
    ("128x128x32 p4 g8", dict(bk=32, pipeline=4, group=8)),
    ("128x128x32 p5 g8", dict(bk=32, pipeline=5, group=8)),
    ("128x128x64 p3 g8 w64x32", dict(bk=64, pipeline=3, group=8, wn=32)),
]


def registers(f):
    log = f.get_source("nvrtc_log") or ""
    used = [x.strip() for x in log.splitlines() if "Used" in x]
    return used[0] if used else "(no ptxas report)"


def kernels(n, a, b):
    out = []
    for label, kw in VARIANTS:
        try:
            s, args = tc.step2(n, n, n, "float16", swizzle=True, **kw)
            f = ts.build(s, args, target="cuda")
        except ts.TesselError as e:
            print(f"{label}: not built ({type(e).__name__}: {str(e)[:160]})")
            continue
        print(f"{label}: {registers(f)}")
        c = torch.empty(n, n, device="cuda")
        out.append((label, lambda f=f, c=c: f(a, b, c), c))
    c = torch.empty(n, n, device="cuda")
    out.append(("triton 128x128x64 s4 w4",
                triton_gemm.kernel(n, a, b, c, (128, 128, 64, 4, 4), mma_sync=True), c))
    return out


def main():
    cuda_bench.fp16_gemm_experiment(sys.argv[1:], bench.mma_peak, kernels)

if __name__ == "__main__":
    main()
