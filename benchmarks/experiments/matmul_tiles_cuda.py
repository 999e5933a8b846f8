"""Which register tile suits which float32 product on the GPU? The sweep that fitted the model of
the GPU default's matmul tile (src/op/DefaultScheduleGpu.cpp, kMatmulTiles; docs/perf/
gpu-matmul-tiles.md): for ops_default_cuda's 20 matmul shapes (seed 58) and its 5 batch_matmuls,
the default schedule built under each of eleven tiles forced by the private hook
`ts._tessel.op._force_gpu_matmul_tile` (split-K as the default decides it), each checked
against a float64 product and timed with CUDA events (median of 15, queue pre-filled) against
cuBLAS with TF32 off, in one process. Prints per shape
cuBLAS's TFLOP/s and each tile's ratio to it. "def" is the model's choice.

    python3 benchmarks/experiments/matmul_tiles_cuda.py
"""
import math
import os
import sys

import numpy as np

import tessel as ts  # before torch: the process uses tessel's NVRTC
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import cuda_bench  # noqa: E402

force = ts._tessel.op._force_gpu_matmul_tile
# (rows, row threads, row vthreads, cols, col threads, col vthreads, bk)
TILES = {
    "L8": (128, 16, 2, 128, 16, 2, 8),    # 128 x 128, 256 threads, 8 x 8 a thread
    "L16": (128, 16, 2, 128, 16, 2, 16),
    "S16": (64, 16, 1, 64, 16, 1, 16),    # 64 x 64, 256 threads, 4 x 4
    "MN8": (128, 16, 2, 64, 16, 1, 8),    # 128 x 64, 256 threads, 8 x 4
    "NM8": (64, 16, 1, 128, 16, 2, 8),    # 64 x 128, 256 threads, 4 x 8
    "T64": (64, 8, 2, 64, 8, 2, 16),      # 64 x 64, 64 threads, 8 x 8
    "W8": (64, 8, 2, 128, 16, 2, 8),      # 64 x 128, 128 threads, 8 x 8
    "H8": (128, 16, 2, 64, 8, 2, 8),      # 128 x 64, 128 threads, 8 x 8
    "W16": (64, 8, 2, 128, 16, 2, 16),
    "H16": (128, 16, 2, 64, 8, 2, 16),
    "X32": (32, 8, 1, 64, 16, 1, 16),     # 32 x 64, 128 threads, 4 x 4
}


def shapes():
    rng = np.random.default_rng(58)  # benchmarks/ops_default_cuda.py's
    mm = [(1,) + tuple(int(round(math.exp(x)))
                       for x in rng.uniform(math.log(64), math.log(8192), 3)) for _ in range(20)]
    return mm + [(12, 128, 128, 64), (12, 128, 64, 128), (7, 100, 77, 33), (3, 257, 129, 511),
                 (16, 31, 500, 64)]


def product(b, m, n, k, gen):
    """A float32 matmul (b == 1) or batch_matmul: its output and placeholders, random operands on
    the GPU, their float64 product, and cuBLAS's median time (ms)."""
    dims = ((m, k), (k, n)) if b == 1 else ((b, m, k), (b, k, n))
    A, B = (ts.placeholder(d, name=nm) for d, nm in zip(dims, "AB"))
    y = ts.op.matmul(A, B) if b == 1 else ts.op.batch_matmul(A, B)
    a, bb = (torch.randn(d, device="cuda", generator=gen) for d in dims)
    return y, A, B, a, bb, a.double() @ bb.double(), cuda_bench.median_ms(lambda: a @ bb, reps=15)


def main():
    ts.auto_schedule.use_shipped_logs(False)
    torch.backends.cuda.matmul.allow_tf32 = False
    gen = torch.Generator("cuda").manual_seed(1)
    for b, m, n, k in shapes():
        y, A, B, a, bb, ref, t_ref = product(b, m, n, k, gen)
        row = []
        for name, tile in [("def", None)] + list(TILES.items()):
            t = cuda_bench.checked_ms(cuda_bench.build_forced(force, tile, y, [A, B]), (a, bb), ref)
            row.append(f"{name}=WRONG" if t is None else f"{name}={t_ref / t:.3f}")
        print(f"{b}x{m}x{n}x{k} cublas {2.0 * b * m * n * k / t_ref / 1e9:.1f} TFLOP/s: "
              + " ".join(row), flush=True)


if __name__ == "__main__":
    main()
