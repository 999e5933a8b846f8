"""ops_lowp_cuda: float16 and bfloat16 matrix products under the operator library's default
"cuda" schedules (ts.op.default_schedule, docs/operators.md "Tensor cores"), without the shipped
tuning logs, against PyTorch (cuBLAS) in the same process: the same inputs, the same output type
(16-bit, accumulated in float32 by both). Cases: matmul at 4096^3, 1000^3, 1536 x 1000 x 777 and
64 x 4096 x 4096, and at 20 shapes drawn log-uniformly from [64, 8192]^3 with a fixed seed
(printed); dense with bias and GELU at BERT-base's two shapes and an odd one; batch_matmul at
BERT-base's attention (12 heads, sequence 128: Q K^T and P V). Every
result is checked against a float64 reference first; times are the median of 30 runs with CUDA
events (support/cuda_bench.py). Each row says which kernel the default chose (`wgmma+tma`,
`wgmma`, `mma` for mma.sync, `fma` otherwise).

Prints one row per case and
  BENCH ops_lowp_cuda <case> tessel=<GFLOP/s> torch=<GFLOP/s> ratio=<x>
then, per dtype, the 20 shapes' geometric mean and minimum. Bars (issue 59): each named shape
>= 0.8 x cuBLAS; the 20: geomean >= 0.8 x, none below 0.6 x; batch_matmul >= 0.8 x.

    python benchmarks/ops_lowp_cuda.py             every case
    python benchmarks/ops_lowp_cuda.py --dry-run   no GPU: build every case for sm_90
"""
import math
import os
import sys

import numpy as np

import tessel as ts

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))

DRY = "--dry-run" in sys.argv
ts.auto_schedule.use_shipped_logs(False)
NAMED = [(4096, 4096, 4096), (1000, 1000, 1000), (1536, 1000, 777), (64, 4096, 4096)]


def random_shapes():
    rng = np.random.default_rng(59)
    return [tuple(int(round(math.exp(x))) for x in rng.uniform(math.log(64), math.log(8192), 3))
            for _ in range(20)]


def cases(dtype):
    """(name, group, placeholders' shapes, build(placeholders) -> output, torch reference, FLOPs)."""
    out = []
    for group, shapes in (("named", NAMED), ("random", random_shapes())):
        for m, n, k in shapes:
            out.append((f"matmul_{dtype}_{m}x{n}x{k}", group, [(m, k), (k, n)],
                        lambda a, b: ts.op.matmul(a, b), lambda a, b: a @ b, 2.0 * m * n * k))
    for m, n, k in [(128, 3072, 768), (128, 768, 3072), (77, 1000, 333)]:
        out.append((f"dense_gelu_{dtype}_{m}x{n}x{k}", "dense", [(m, k), (n, k), (n,)],
                    lambda x, w, b: ts.op.dense(x, w, b, activation="gelu"),
                    lambda x, w, b: gelu(x @ w.T + b), 2.0 * m * n * k))
    out.append((f"batch_matmul_{dtype}_qk_12x128x128x64", "bert", [(12, 128, 64), (12, 128, 64)],
                lambda q, k: ts.op.batch_matmul(q, k, transpose_b=True),
                lambda q, k: q @ k.transpose(1, 2), 2.0 * 12 * 128 * 128 * 64))
    out.append((f"batch_matmul_{dtype}_pv_12x128x64x128", "bert", [(12, 128, 128), (12, 128, 64)],
                lambda p, v: ts.op.batch_matmul(p, v), lambda p, v: p @ v,
                2.0 * 12 * 128 * 64 * 128))
    return out


def gelu(x):
    import torch

    return torch.nn.functional.gelu(x)


def build(case, dtype, target):
    _, _, shapes, fn, _, _ = case
    ins = [ts.placeholder(s, dtype=dtype, name=f"in{i}") for i, s in enumerate(shapes)]
    y = fn(*ins)
    return ts.build(ts.op.default_schedule(y, ts.Target(target)), ins + [y], target=target)


def kernel_of(cu):
    """The instructions the default chose: wgmma (with TMA copies), mma.sync, or CUDA cores."""
    if "wgmma.mma_async" in cu:
        return "wgmma+tma" if "cp.async.bulk.tensor" in cu else "wgmma"
    return "mma" if "mma.sync" in cu else "fma"


def main():
    import torch

    import cuda_bench

    print("random shapes (m x n x k, seed 59):",
          " ".join(f"{m}x{n}x{k}" for m, n, k in random_shapes()))
    gen = torch.Generator("cuda").manual_seed(1)
    lines = []
    for dtype in ("float16", "bfloat16"):
        tdt = getattr(torch, dtype)
        logs = []
        for case in cases(dtype):
            name, group, shapes, _, ref_fn, work = case
            f = build(case, dtype, "cuda")
            kernel = kernel_of(f.get_source("cu"))
            args = [torch.randn(s, device="cuda", generator=gen).to(tdt) for s in shapes]
            ref = ref_fn(*[a.double() for a in args])
            y = torch.full(ref.shape, float("nan"), device="cuda", dtype=tdt)
            f(*args, y)
            torch.cuda.synchronize()
            err = cuda_bench.relative_error(y.double(), ref)
            assert err < 2e-2, f"tessel's {name} is wrong: relative error {err}"
            t = cuda_bench.median_ms(lambda: f(*args, y))
            t_ref = cuda_bench.median_ms(lambda: ref_fn(*args))
            mine, theirs = work / t / 1e6, work / t_ref / 1e6
            if group == "random":
                logs.append(math.log(mine / theirs))
            print(f"{name:42s} {kernel:9s} tessel {mine:9.1f}  torch {theirs:9.1f} GFLOP/s ratio "
                  f"{mine / theirs:.3f}")
            lines.append(cuda_bench.bench_line("ops_lowp_cuda", name, mine, "torch", theirs))
        print(f"{dtype} matmul, 20 random shapes: geomean {math.exp(sum(logs) / len(logs)):.3f}"
              f" x cuBLAS, lowest {math.exp(min(logs)):.3f}")
    print("\n".join(lines))


def dry_run():
    for dtype in ("float16", "bfloat16"):
        for case in cases(dtype):
            f = build(case, dtype, "cuda -arch=sm_90")
            kernel = kernel_of(f.get_source("cu"))
            print(f"{case[0]}: compiles for sm_90 ({kernel})")
    print("ops_lowp_cuda: dry run done (no GPU timing)")


if __name__ == "__main__":
    dry_run() if DRY else main()
