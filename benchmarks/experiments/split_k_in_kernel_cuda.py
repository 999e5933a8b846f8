"""Split-K in one kernel (docs/operators.md, "A few rows over a long k"): the float16 and
bfloat16 matmul defaults at shapes whose sm_90a default splits k on wgmma tiles, each built
twice in one process, with TESSEL_CUDA_SPLIT_K_KERNELS=2 (the partial sums, then a second
kernel sums them) and without (the last block to finish a tile sums its parts in the wgmma
kernel), each called three times and checked against a float64 product (the counters must be
left zero between calls), then timed against PyTorch's product (cuBLAS) in 3 interleaved rounds
of medians of 30 (CUDA events). Prints each shape's kernel counts and ratios to cuBLAS, then the
geometric means.

    python3 benchmarks/experiments/split_k_in_kernel_cuda.py      (DTYPES=float16 for one dtype)
"""
import os
import sys

import tessel as ts  # before torch: the process uses tessel's NVRTC
import torch  # noqa: F401

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "support"))
import cuda_bench  # noqa: E402

ts.auto_schedule.use_shipped_logs(False)
SHAPES = [(64, 4096, 4096), (32, 4096, 4096), (128, 2048, 4096), (64, 2048, 8192),
          (64, 1024, 4096), (100, 4096, 4096), (64, 1024, 8192)]

if __name__ == "__main__":
    cuda_bench.compare_matmul_builds(
        ts, SHAPES, "TESSEL_CUDA_SPLIT_K_KERNELS", ["2", "1"], ["two kernels", "one kernel"],
        os.environ.get("DTYPES", "float16,bfloat16").split(","), calls=3)
