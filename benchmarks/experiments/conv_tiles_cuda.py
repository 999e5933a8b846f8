"""How good is the GPU default's conv2d tile model at ranking its own candidates? For each of
conv2d_cuda's ResNet-50 layers (NCHW float32, --batch N, 8 by default), the default schedule
built under the model's first --ranks candidates (op/GpuConvTiles.h, forced by the private hook
`ts._tessel.op._force_gpu_conv_candidate`), each checked against a float64 convolution and timed
with CUDA events (median of 15, queue pre-filled) against cuDNN (TF32 off, cudnn.benchmark on)
in one process. Prints per layer cuDNN's GFLOP/s and, per rank, the tile (kb/tk ph/th pw/tw bk),
the model's cycles and the measured ratio to cuDNN; then the geomean of rank 0 (the default)
against that of each layer's best rank.

    python3 benchmarks/experiments/conv_tiles_cuda.py [--batch 8] [--ranks 12]
"""
import argparse
import math
import os
import sys

import tessel as ts  # before torch: the process uses tessel's NVRTC
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import cuda_bench  # noqa: E402
from conv2d_cuda import layers  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--ranks", type=int, default=12)
    args = p.parse_args()
    ts.auto_schedule.use_shipped_logs(False)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    ts._tessel.op._force_gpu_conv_kernel("direct")  # groups of 1 would take the implicit GEMM
    force = ts._tessel.op._force_gpu_conv_candidate
    gen = torch.Generator("cuda").manual_seed(1)
    n = args.batch
    first, best = [], []
    for name, (c, h, k, r, stride, pad), _ in layers():
        oh = (h + 2 * pad - r) // stride + 1
        cands = ts._tessel.op._gpu_conv_candidates([n, k, oh, oh, c, r, r, stride, stride], False,
                                                   "cuda")
        x = torch.randn(n, c, h, h, device="cuda", generator=gen)
        w = torch.randn(k, c, r, r, device="cuda", generator=gen) / math.sqrt(c * r * r)
        ref = F.conv2d(x.double(), w.double(), stride=stride, padding=pad)
        flops = 2.0 * n * k * oh * oh * c * r * r
        t_ref = cuda_bench.median_ms(lambda: F.conv2d(x, w, stride=stride, padding=pad), reps=15)
        X = ts.placeholder((n, c, h, h), name="x")
        W = ts.placeholder((k, c, r, r), name="w")
        Y = ts.op.conv2d_nchw(X, W, stride=stride, padding=pad)
        print(f"b{n}_{name}: cudnn {flops / t_ref / 1e6:.0f} GFLOP/s, {len(cands)} candidates",
              flush=True)
        ratios = []
        for rank in range(min(args.ranks, len(cands))):
            f = cuda_bench.build_forced(force, rank, Y, [X, W])
            y = torch.full(ref.shape, float("nan"), device="cuda")
            f(x, w, y)
            err = cuda_bench.relative_error(y, ref)
            t = cuda_bench.median_ms(lambda: f(x, w, y), reps=15) if err < 1e-4 else float("inf")
            ratios.append(t_ref / t)
            kb, tk, ph, th, pw, tw, bk, db, cyc = cands[rank]
            print(f"  rank {rank:2d} {kb}/{tk} {ph}/{th} {pw}/{tw} bk{bk}{' db' if db else ''}"
                  f" cycles {cyc:.0f}: {t_ref / t:.3f}" + ("" if err < 1e-4 else " WRONG"),
                  flush=True)
        first.append(math.log(ratios[0]))
        best.append(math.log(max(ratios)))
    print(f"batch {n}: geomean rank 0 {math.exp(sum(first) / len(first)):.3f} x cuDNN, best of "
          f"{args.ranks} ranks {math.exp(sum(best) / len(best)):.3f}")


if __name__ == "__main__":
    main()
