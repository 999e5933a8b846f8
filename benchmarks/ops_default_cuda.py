"""ops_default_cuda: the operator library's matrix products under their default "cuda" schedules
(ts.op.default_schedule, docs/operators.md "GPU default schedules"), without the shipped tuning
logs, against PyTorch in the same process with TF32 off (asserted): matmul at 20 shapes drawn
log-uniformly from [64, 8192]^3 with a fixed seed (printed), batch_matmul at BERT-base's two
attention shapes (sequence 128) and three odd ones, matmul of one and of three rows (too few to
tile), dense with bias and GELU at four shapes (one of a single row: ResNet-50's classifier), and
the memory-bound defaults (softmax, layer norm, row sums) at one size each. Every result is
checked against a float64 reference first; times are the median of 30 runs with CUDA events, the
queue pre-filled (support/cuda_bench.py).

Prints one row per case and
  BENCH ops_default_cuda <case> tessel=<GFLOP/s or GB/s> torch=<same> ratio=<x>
then the matmul geometric mean and minimum. Bars (issue 58): matmul geomean >= 0.85 x cuBLAS,
none below 0.6 x; batch_matmul >= 0.85 x each.

    python benchmarks/ops_default_cuda.py             every case
    python benchmarks/ops_default_cuda.py --tf32      the products with allow_tf32=True, against
                                                      PyTorch with TF32 on (cuBLAS's TF32 GEMM)
    python benchmarks/ops_default_cuda.py --dry-run   no GPU: build every case for sm_90
"""
import math
import os
import sys

import numpy as np

import tessel as ts

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))

DRY = "--dry-run" in sys.argv
TF32 = "--tf32" in sys.argv  # the products on TF32 (allow_tf32), PyTorch's too
ts.auto_schedule.use_shipped_logs(False)


def matmul_shapes():
    rng = np.random.default_rng(58)
    return [tuple(int(round(math.exp(x))) for x in rng.uniform(math.log(64), math.log(8192), 3))
            for _ in range(20)]


def cases():
    """(name, kind, placeholders' shapes, build(placeholders) -> output, torch reference, work):
    work is FLOPs for products, bytes for the memory-bound ones."""
    out = []
    for m, n, k in matmul_shapes():
        out.append((f"matmul_{m}x{n}x{k}", "flop", [(m, k), (k, n)],
                    lambda a, b: ts.op.matmul(a, b, allow_tf32=TF32), lambda a, b: a @ b,
                    2.0 * m * n * k))
    for bsz, m, n, k in [(12, 128, 128, 64), (12, 128, 64, 128), (7, 100, 77, 33),
                         (3, 257, 129, 511), (16, 31, 500, 64)]:
        out.append((f"batch_matmul_{bsz}x{m}x{n}x{k}", "flop", [(bsz, m, k), (bsz, k, n)],
                    lambda a, b: ts.op.batch_matmul(a, b, allow_tf32=TF32), lambda a, b: a @ b,
                    2.0 * bsz * m * n * k))
    for m, n, k in [(1, 1000, 2048), (3, 4096, 1024)]:  # too few rows to tile (GEMV-like)
        out.append((f"row_matmul_{m}x{n}x{k}", "flop", [(m, k), (k, n)],
                    lambda a, b: ts.op.matmul(a, b, allow_tf32=TF32), lambda a, b: a @ b,
                    2.0 * m * n * k))
    for m, n, k in [(128, 3072, 768), (128, 768, 3072), (77, 1000, 333), (1, 1000, 2048)]:
        out.append((f"dense_gelu_{m}x{n}x{k}", "flop", [(m, k), (n, k), (n,)],
                    lambda x, w, b: ts.op.dense(x, w, b, activation="gelu", allow_tf32=TF32),
                    lambda x, w, b: gelu(x @ w.T + b), 2.0 * m * n * k))
    for n, m in [] if TF32 else [(8192, 4096)]:
        out.append((f"softmax_{n}x{m}", "byte", [(n, m)], lambda x: ts.op.softmax(x, axis=1),
                    lambda x: x.softmax(dim=1), 8.0 * n * m))
        out.append((f"layer_norm_{n}x{m}", "byte", [(n, m)],
                    lambda x: ts.op.layer_norm(x, None, None, 1e-5),
                    lambda x: layer_norm(x), 8.0 * n * m))
        out.append((f"row_sum_{n}x{m}", "byte", [(n, m)], lambda x: ts.op.sum(x, axis=[1]),
                    lambda x: x.sum(dim=1), 4.0 * n * m + 4.0 * n))
    return out


def gelu(x):
    import torch

    return torch.nn.functional.gelu(x)


def layer_norm(x):
    import torch

    return torch.nn.functional.layer_norm(x, x.shape[-1:], eps=1e-5)


def build(case, target):
    name, _, shapes, fn, _, _ = case
    ins = [ts.placeholder(s, name=f"in{i}") for i, s in enumerate(shapes)]
    y = fn(*ins)
    return ts.build(ts.op.default_schedule(y, ts.Target(target)), ins + [y], target=target)


def main():
    import torch

    import cuda_bench

    torch.backends.cuda.matmul.allow_tf32 = TF32
    torch.backends.cudnn.allow_tf32 = TF32
    assert torch.backends.cuda.matmul.allow_tf32 == TF32
    bench = "ops_tf32_cuda" if TF32 else "ops_default_cuda"
    print("matmul shapes (m x n x k, seed 58):", " ".join(f"{m}x{n}x{k}"
                                                          for m, n, k in matmul_shapes()))
    gen = torch.Generator("cuda").manual_seed(1)
    lines, logs = [], []
    for case in cases():
        name, kind, shapes, _, ref_fn, work = case
        f = build(case, "cuda")
        args = [torch.randn(s, device="cuda", generator=gen) for s in shapes]
        ref = ref_fn(*[a.double() for a in args])
        y = torch.full(ref.shape, float("nan"), device="cuda")
        f(*args, y)
        torch.cuda.synchronize()
        err = cuda_bench.relative_error(y, ref)
        # TF32 keeps 10 mantissa bits of each operand: about 1e-3 of relative error
        assert err < (5e-3 if TF32 else 1e-4), f"tessel's {name} is wrong: relative error {err}"
        t = cuda_bench.median_ms(lambda: f(*args, y))
        t_ref = cuda_bench.median_ms(lambda: ref_fn(*args))
        unit = "GFLOP/s" if kind == "flop" else "GB/s"
        mine, theirs = work / t / 1e6, work / t_ref / 1e6
        if name.startswith("matmul_"):
            logs.append(math.log(mine / theirs))
        print(f"{name:30s} tessel {mine:9.1f}  torch {theirs:9.1f} {unit:7s} ratio "
              f"{mine / theirs:.3f}")
        lines.append(cuda_bench.bench_line(bench, name, mine, "torch", theirs))
    print(f"matmul: geomean {math.exp(sum(logs) / len(logs)):.3f} x cuBLAS"
          f"{' (TF32)' if TF32 else ''}, lowest "
          f"{math.exp(min(logs)):.3f}")
    print("\n".join(lines))


def dry_run():
    for case in cases():
        ptx = build(case, "cuda -arch=sm_90").get_source("ptx")
        assert not TF32 or "mma.sync.aligned.m16n8k8.row.col.f32.tf32" in ptx, case[0]
        print(f"{case[0]}: compiles for sm_90")
    print("ops_default_cuda: dry run done (no GPU timing)")


if __name__ == "__main__":
    dry_run() if DRY else main()
