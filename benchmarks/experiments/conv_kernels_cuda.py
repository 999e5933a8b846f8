"""The GPU default's two conv2d kernels side by side: for each of conv2d_cuda's ResNet-50 layers
(NCHW float32, and NHWC with --nhwc) at each --batch, the default schedule built with the implicit
GEMM (Schedule.reindex onto the matmul tiles) and with the direct convolution (op/GpuConvTiles.h),
forced by the private hook `ts._tessel.op._force_gpu_conv_kernel`, each checked against a float64
convolution and timed with CUDA events (median of 15, queue pre-filled) against cuDNN (TF32 off,
cudnn.benchmark on) in one process. Prints per layer both ratios to cuDNN, then per batch the
geomean and lowest of each kernel and of the default's own choice.

    python3 benchmarks/experiments/conv_kernels_cuda.py [--batch 1 8] [--nhwc]
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

KERNELS = ["implicit_gemm", "direct", None]  # None: the default's own choice


def conv(n, c, h, k, r, stride, pad, nhwc):
    if nhwc:
        X = ts.placeholder((n, h, h, c), name="x")
        W = ts.placeholder((r, r, c, k), name="w")
        return X, W, ts.op.conv2d_nhwc(X, W, stride=stride, padding=pad)
    X = ts.placeholder((n, c, h, h), name="x")
    W = ts.placeholder((k, c, r, r), name="w")
    return X, W, ts.op.conv2d_nchw(X, W, stride=stride, padding=pad)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, nargs="+", default=[1, 8])
    p.add_argument("--nhwc", action="store_true")
    args = p.parse_args()
    ts.auto_schedule.use_shipped_logs(False)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    force = ts._tessel.op._force_gpu_conv_kernel
    gen = torch.Generator("cuda").manual_seed(1)
    for n in args.batch:
        logs = {str(k): [] for k in KERNELS}
        lowest = {str(k): (float("inf"), "") for k in KERNELS}
        for name, (c, h, k, r, stride, pad), _ in layers():
            x = torch.randn(n, c, h, h, device="cuda", generator=gen)
            w = torch.randn(k, c, r, r, device="cuda", generator=gen) / math.sqrt(c * r * r)
            ref = F.conv2d(x.double(), w.double(), stride=stride, padding=pad)
            if args.nhwc:
                x_t, w_t = x.permute(0, 2, 3, 1).contiguous(), w.permute(2, 3, 1, 0).contiguous()
                ref = ref.permute(0, 2, 3, 1).contiguous()
                x_ref = x.contiguous(memory_format=torch.channels_last)
                w_ref = w.contiguous(memory_format=torch.channels_last)
            else:
                x_t, w_t, x_ref, w_ref = x, w, x, w
            flops = 2.0 * ref.numel() * c * r * r
            t_ref = cuda_bench.median_ms(
                lambda: F.conv2d(x_ref, w_ref, stride=stride, padding=pad), reps=15)
            X, W, Y = conv(n, c, h, k, r, stride, pad, args.nhwc)
            line = f"b{n}_{name:24s} cudnn {flops / t_ref / 1e6:8.0f} GFLOP/s"
            for kernel in KERNELS:
                f = cuda_bench.build_forced(force, kernel, Y, [X, W])
                y = torch.full(ref.shape, float("nan"), device="cuda")
                f(x_t, w_t, y)
                err = cuda_bench.relative_error(y, ref)
                assert err < 1e-4, f"{kernel} is wrong at b{n}_{name}: relative error {err}"
                ratio = t_ref / cuda_bench.median_ms(lambda: f(x_t, w_t, y), reps=15)
                logs[str(kernel)].append(math.log(ratio))
                lowest[str(kernel)] = min(lowest[str(kernel)], (ratio, name))
                line += f"  {kernel or 'default'} {ratio:.3f}"
            print(line, flush=True)
        for kernel in KERNELS:
            v = logs[str(kernel)]
            print(f"batch {n} {'nhwc' if args.nhwc else 'nchw'} {kernel or 'default'}: geomean "
                  f"{math.exp(sum(v) / len(v)):.3f} x cuDNN, lowest {lowest[str(kernel)][0]:.3f} "
                  f"({lowest[str(kernel)][1]})", flush=True)


if __name__ == "__main__":
    main()
