"""How many split-K parts for which float32 product on the GPU? The sweep behind the GPU default's
split-K model (src/op/DefaultScheduleGpu.cpp, split_k_length; docs/perf/gpu-matmul-split-k.md):
for ops_default_cuda's 20 matmul shapes (seed 58) and its 5 batch_matmuls whose 64 x 64 tiles
leave SMs idle, the default schedule built with the reduction split into 1, 2, 3, 4, 6, 8, 12
and 16 parts (each part whole steps of 16, the last one bounded by k; the private hook
`ts._tessel.op._force_split_k_length`) under the model's tile and each of the four tiles of
`TILES` (`ts._tessel.op._force_gpu_matmul_tile`), each checked against a float64 product and
timed with CUDA events (median of 15, queue pre-filled) against cuBLAS with TF32 off, in one
process. Prints per shape cuBLAS's time and, per part count, each tile's time in microseconds
and its ratio to cuBLAS; then the best.

    python3 benchmarks/experiments/matmul_split_k_cuda.py [--all] [--quick] [BxMxNxK ...]
    (--all: every shape, not only those that leave SMs idle; --quick: the model's tile only;
    shapes named: only those)
"""
import os
import sys

import tessel as ts  # before torch: the process uses tessel's NVRTC
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import cuda_bench  # noqa: E402
from matmul_tiles_cuda import TILES as ALL_TILES, product, shapes  # noqa: E402

force_tile = ts._tessel.op._force_gpu_matmul_tile
force_split = ts._tessel.op._force_split_k_length
# matmul_tiles_cuda's: 64 x 128 of 128 threads, 64 x 64 of 64, 32 x 64 of 128, 64 x 64 of 256
TILES = {name: ALL_TILES[name] for name in ("W16", "T64", "X32", "S16")}
PARTS = [1, 2, 3, 4, 6, 8, 12, 16]
SMS = 132
QUICK = "--quick" in sys.argv  # the model's tile only
ONLY = [a for a in sys.argv[1:] if not a.startswith("--")]  # shapes named bxmxnxk


def lengths(k):
    out = []
    for p in PARTS:
        length = 0 if p == 1 else -(-(-(-k // p)) // 16) * 16
        if length == 0 or (length < k and length not in out):
            out.append(length)
    if 64 < k and 64 not in out:
        out.append(64)
    return out


def build(y, inputs, tile, length):
    force_split(length)
    try:
        return cuda_bench.build_forced(force_tile, tile, y, inputs)
    finally:
        force_split(None)


def main():
    ts.auto_schedule.use_shipped_logs(False)
    torch.backends.cuda.matmul.allow_tf32 = False
    gen = torch.Generator("cuda").manual_seed(1)
    for b, m, n, k in shapes():
        if "--all" not in sys.argv and b * -(-m // 64) * -(-n // 64) >= 2 * SMS:
            continue
        if ONLY and f"{b}x{m}x{n}x{k}" not in ONLY:
            continue
        y, A, B, a, bb, ref, t_ref = product(b, m, n, k, gen)
        print(f"{b}x{m}x{n}x{k} cublas {t_ref * 1e3:.1f} us", flush=True)
        best = None
        for length in lengths(k):
            row = []
            for name, tile in [("model", None)] + ([] if QUICK else list(TILES.items())):
                t = cuda_bench.checked_ms(build(y, [A, B], tile, length), (a, bb), ref)
                if t is None:
                    row.append(f"{name}=WRONG")
                    continue
                row.append(f"{name}={t * 1e3:.1f}us/{t_ref / t:.3f}")
                if best is None or t < best[0]:
                    best = (t, length, name)
            parts = -(-k // length) if length else 1
            print(f"  parts {parts:2d} length {length or k:5d}: " + " ".join(row), flush=True)
        print(f"  best: parts {-(-k // best[1]) if best[1] else 1} length {best[1] or k} "
              f"{best[2]} {t_ref / best[0]:.3f} x cuBLAS", flush=True)


if __name__ == "__main__":
    main()
