"""Independent kernels as one launch (docs/cuda.md, "From schedule to launch", 7): the float16 and
bfloat16 matmul defaults at the shapes whose odd rows take padded copies of both operands
(ops_lowp_cuda's 20 random shapes, seed 59, and four more), each built twice in one process,
with TESSEL_CUDA_MERGE_KERNELS=0 (the two copies and the product: three launches) and without
(the copies one kernel: two), each checked against a float64 product, then timed against
PyTorch's product (cuBLAS) in 3 interleaved rounds of medians of 30 (CUDA events). Prints, per
shape whose kernel count differs, the two ratios to cuBLAS, then each dtype's geometric means.

    python3 benchmarks/experiments/merge_kernels_cuda.py      (DTYPES=float16 for one dtype)
"""
import os
import sys

import tessel as ts  # before torch: the process uses tessel's NVRTC
import torch  # noqa: F401

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "support"))
sys.path.insert(0, os.path.join(here, ".."))
import cuda_bench  # noqa: E402
from ops_lowp_cuda import random_shapes  # noqa: E402

ts.auto_schedule.use_shipped_logs(False)
SHAPES = [(202, 65, 199), (399, 158, 139), (1543, 202, 87), (77, 1000, 333)] + random_shapes()

if __name__ == "__main__":
    cuda_bench.compare_matmul_builds(
        ts, SHAPES, "TESSEL_CUDA_MERGE_KERNELS", ["0", "1"], ["apart", "merged"],
        os.environ.get("DTYPES", "float16,bfloat16").split(","), only_differing=True)
