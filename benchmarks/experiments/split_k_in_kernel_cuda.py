"""Split-K in one kernel (docs/operators.md, "A few rows over a long k"): the float16 and
bfloat16 matmul defaults at shapes whose sm_90a default splits k on wgmma tiles, each built
twice in one process, with TESSEL_CUDA_SPLIT_K_KERNELS=2 (the partial sums, then a second
kernel sums them) and without (the last block to finish a tile sums its parts in the wgmma
kernel), each checked against a float64 product, then timed against PyTorch's product (cuBLAS)
in 3 interleaved rounds of medians of 30 (CUDA events). Prints each shape's kernel counts and
ratios to cuBLAS, then the geometric means.

    python3 benchmarks/experiments/split_k_in_kernel_cuda.py      (DTYPES=float16 for one dtype)
"""
import math
import os
import sys

import numpy as np

import tessel as ts  # before torch: the process uses tessel's NVRTC
import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "support"))
import cuda_bench  # noqa: E402

ts.auto_schedule.use_shipped_logs(False)
SHAPES = [(64, 4096, 4096), (32, 4096, 4096), (128, 2048, 4096), (64, 2048, 8192),
          (64, 1024, 4096), (100, 4096, 4096), (64, 1024, 8192)]


def build(m, n, k, dtype, kernels):
    """The default "cuda" schedule of an m x n x k matmul with split-K's sum in `kernels`."""
    os.environ["TESSEL_CUDA_SPLIT_K_KERNELS"] = str(kernels)
    try:
        a = ts.placeholder((m, k), dtype=dtype, name="a")
        b = ts.placeholder((k, n), dtype=dtype, name="b")
        y = ts.op.matmul(a, b)
        return ts.build(ts.op.default_schedule(y, ts.Target("cuda")), [a, b, y], target="cuda")
    finally:
        del os.environ["TESSEL_CUDA_SPLIT_K_KERNELS"]


def main():
    gen = torch.Generator("cuda").manual_seed(1)
    for dtype in os.environ.get("DTYPES", "float16,bfloat16").split(","):
        tdt = getattr(torch, dtype)
        logs = ([], [])
        for m, n, k in SHAPES:
            fs = [build(m, n, k, dtype, kernels) for kernels in (2, 1)]
            counts = [f.get_source("cu").count("__global__") for f in fs]
            a = torch.randn((m, k), device="cuda", generator=gen).to(tdt)
            b = torch.randn((k, n), device="cuda", generator=gen).to(tdt)
            ref = a.double() @ b.double()
            outs = []
            for f in fs:
                y = torch.full((m, n), float("nan"), device="cuda", dtype=tdt)
                for _ in range(3):  # the counters must be left zero between calls
                    f(a, b, y)
                    torch.cuda.synchronize()
                    err = cuda_bench.relative_error(y.double(), ref)
                    assert err < 2e-2, f"{dtype} {m}x{n}x{k}: relative error {err}"
                outs.append(y)
            ratios = ([], [])
            for _ in range(3):
                t_ref = cuda_bench.median_ms(lambda: a @ b)
                for i, f in enumerate(fs):
                    ratios[i].append(t_ref / cuda_bench.median_ms(lambda: f(a, b, outs[i])))
            x = [float(np.median(r)) for r in ratios]
            for i in range(2):
                logs[i].append(math.log(x[i]))
            print(f"{dtype} {m}x{n}x{k}: {counts[0]} kernels {x[0]:.3f}, {counts[1]} "
                  f"kernel(s) {x[1]:.3f} x cuBLAS", flush=True)
        g = [math.exp(sum(v) / len(v)) for v in logs]
        print(f"{dtype}: {len(logs[0])} shapes, geomean {g[0]:.3f} two kernels, {g[1]:.3f} one")


if __name__ == "__main__":
    main()
