"""Independent kernels as one launch (docs/cuda.md, "From schedule to launch", 7): the float16 and
bfloat16 matmul defaults at the shapes whose odd rows take padded copies of both operands
(ops_lowp_cuda's 20 random shapes, seed 59, and four more), each built twice in one process,
with TESSEL_CUDA_MERGE_KERNELS=0 (the two copies and the product: three launches) and without
(the copies one kernel: two), each checked against a float64 product, then timed against
PyTorch's product (cuBLAS) in 3 interleaved rounds of medians of 30 (CUDA events). Prints, per
shape whose kernel count differs, the two ratios to cuBLAS, then each dtype's geometric means.

    python3 benchmarks/experiments/merge_kernels_cuda.py      (DTYPES=float16 for one dtype)
"""
import math
import os
import sys

import numpy as np

import tessel as ts  # before torch: the process uses tessel's NVRTC
import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "support"))
sys.path.insert(0, os.path.join(here, ".."))
import cuda_bench  # noqa: E402
from ops_lowp_cuda import random_shapes  # noqa: E402

ts.auto_schedule.use_shipped_logs(False)
SHAPES = [(202, 65, 199), (399, 158, 139), (1543, 202, 87), (77, 1000, 333)] + random_shapes()


def build(m, n, k, dtype, merge):
    """The default "cuda" schedule of an m x n x k matmul, split with merging on or off."""
    os.environ["TESSEL_CUDA_MERGE_KERNELS"] = "1" if merge else "0"
    try:
        a = ts.placeholder((m, k), dtype=dtype, name="a")
        b = ts.placeholder((k, n), dtype=dtype, name="b")
        y = ts.op.matmul(a, b)
        return ts.build(ts.op.default_schedule(y, ts.Target("cuda")), [a, b, y], target="cuda")
    finally:
        del os.environ["TESSEL_CUDA_MERGE_KERNELS"]


def main():
    gen = torch.Generator("cuda").manual_seed(1)
    for dtype in os.environ.get("DTYPES", "float16,bfloat16").split(","):
        tdt = getattr(torch, dtype)
        logs = ([], [])
        for m, n, k in SHAPES:
            fs = [build(m, n, k, dtype, merge) for merge in (False, True)]
            kernels = [f.get_source("cu").count("__global__") for f in fs]
            if kernels[0] == kernels[1]:
                continue
            a = torch.randn((m, k), device="cuda", generator=gen).to(tdt)
            b = torch.randn((k, n), device="cuda", generator=gen).to(tdt)
            ref = a.double() @ b.double()
            outs = []
            for f in fs:
                y = torch.full((m, n), float("nan"), device="cuda", dtype=tdt)
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
            print(f"{dtype} {m}x{n}x{k}: {kernels[0]} launches {x[0]:.3f}, {kernels[1]} "
                  f"launches {x[1]:.3f} x cuBLAS", flush=True)
        if logs[0]:
            g = [math.exp(sum(v) / len(v)) for v in logs]
            print(f"{dtype}: {len(logs[0])} shapes, geomean {g[0]:.3f} apart, {g[1]:.3f} merged")


if __name__ == "__main__":
    main()
