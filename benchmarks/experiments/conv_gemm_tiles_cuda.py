"""Which matmul register tile for the implicit GEMM of a convolution? For each of conv2d_cuda's
ResNet-50 layers (NCHW float32, or NHWC with --nhwc) at each --batch, the GPU default's implicit
GEMM (the conv reindexed into a matrix product, docs/perf/gpu-conv-implicit-gemm.md) built under
the model's tile and under each of matmul_tiles_cuda.py's eleven tiles (forced by the private hook
`ts._tessel.op._force_gpu_matmul_tile`; split-K as the default decides it), each checked against a
float64 convolution and timed with CUDA events (median of 15, queue pre-filled) against cuDNN (TF32
off, cudnn.benchmark on) in one process. Prints per layer each tile's ratio to cuDNN, then per batch
the geomean of the model's choice, of each fixed tile and of each layer's best.

    python3 benchmarks/experiments/conv_gemm_tiles_cuda.py [--batch 1 8] [--nhwc] [--tiles S16 ..]
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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cuda_bench  # noqa: E402
from conv2d_cuda import layers  # noqa: E402
from conv_kernels_cuda import conv  # noqa: E402
from matmul_tiles_cuda import TILES  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, nargs="+", default=[1, 8])
    p.add_argument("--nhwc", action="store_true")
    p.add_argument("--tiles", nargs="+", default=list(TILES), help="of matmul_tiles_cuda's")
    args = p.parse_args()
    ts.auto_schedule.use_shipped_logs(False)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    ts._tessel.op._force_gpu_conv_kernel("implicit_gemm")
    force = ts._tessel.op._force_gpu_matmul_tile
    choices = {"model": None, **{t: TILES[t] for t in args.tiles}}
    gen = torch.Generator("cuda").manual_seed(1)
    for n in args.batch:
        logs = {name: [] for name in list(choices) + ["best"]}
        for name, (c, h, k, r, stride, pad), _ in layers():
            x = torch.randn(n, c, h, h, device="cuda", generator=gen)
            w = torch.randn(k, c, r, r, device="cuda", generator=gen) / math.sqrt(c * r * r)
            ref = F.conv2d(x.double(), w.double(), stride=stride, padding=pad)
            x_ref, w_ref = x, w
            if args.nhwc:
                x_ref = x.contiguous(memory_format=torch.channels_last)
                w_ref = w.contiguous(memory_format=torch.channels_last)
                x, w = x.permute(0, 2, 3, 1).contiguous(), w.permute(2, 3, 1, 0).contiguous()
                ref = ref.permute(0, 2, 3, 1).contiguous()
            t_ref = cuda_bench.median_ms(
                lambda: F.conv2d(x_ref, w_ref, stride=stride, padding=pad), reps=15)
            X, W, Y = conv(n, c, h, k, r, stride, pad, args.nhwc)
            ratios = {}
            for choice, tile in choices.items():
                f = cuda_bench.build_forced(force, tile, Y, [X, W])
                y = torch.full(ref.shape, float("nan"), device="cuda")
                f(x, w, y)
                err = cuda_bench.relative_error(y, ref)
                assert err < 1e-4, f"{choice} is wrong at b{n}_{name}: relative error {err}"
                ratios[choice] = t_ref / cuda_bench.median_ms(lambda: f(x, w, y), reps=15)
            ratios["best"] = max(ratios.values())
            for choice, ratio in ratios.items():
                logs[choice].append(math.log(ratio))
            print(f"b{n}_{name:24s} " + " ".join(f"{c} {v:.2f}" for c, v in ratios.items()),
                  flush=True)
        print(f"batch {n} {'nhwc' if args.nhwc else 'nchw'} geomean: " + " ".join(
            f"{c} {math.exp(sum(v) / len(v)):.3f}" for c, v in logs.items()), flush=True)


if __name__ == "__main__":
    main()
