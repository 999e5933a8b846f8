"""conv2d_cuda: the distinct 3x3 and 1x1 conv2d layers of ResNet-50 (the `resnet50` preset's
shapes, NCHW float32), ts.op.conv2d_nchw under its default "cuda" schedule's rules
(docs/operators.md, "GPU default schedules": an implicit GEMM on the matmul's register tiles) and tuned as a user gets it (ts.op.default_schedule with the shipped tuning
logs, tuning_logs/: their record for this GPU's target, else the rules again: "(no record)"),
against torch.nn.functional.conv2d through cuDNN with TF32 off (asserted, not assumed)
and cudnn.benchmark on (cuDNN picks its fastest algorithm for each shape, as PyTorch's
documentation advises for fixed shapes). Each result is checked against a float64 convolution
first; GFLOP/s from the median of 30 runs timed with CUDA events, the queue pre-filled. BENCH lines
`<layer>` (the rules) and `<layer>,tuned`; the last two are the geometric means over the layers
(each layer once, as conv2d_cpu), at batch 1 and 8 (the shipped logs hold batch 1's layers: at
batch 8 "tuned" is the rules again). Bars: the rules' geomean >= 0.8 x cuDNN at each batch, none
below 0.5 x (issue 58); the tuned geomean >= 0.7 x cuDNN (issue 24).

With --nhwc the layers are ts.op.conv2d_nhwc (input NHWC, weight HWIO) against cuDNN on
channels_last tensors; with --dtype float16 (or bfloat16) both sides take 16-bit inputs and
outputs (tessel accumulates in float32 on the tensor cores, the implicit GEMM on mma.sync:
docs/perf/gpu-conv-tensor-cores.md; the bars of issue 59: geomean >= 0.8 x cuDNN, none below
0.5 x, NHWC at batch 1 and 8), checked to a relative error of 1e-2.

    python benchmarks/conv2d_cuda.py             every layer, batch 1 and 8
    python benchmarks/conv2d_cuda.py --batch 8   every layer at one batch
    python benchmarks/conv2d_cuda.py --nhwc --dtype float16
    python benchmarks/conv2d_cuda.py --dry-run   no GPU: build every layer for sm_90 (ptxas report)
"""
import math
import os
import sys

# tessel before torch: the process then uses tessel's NVRTC, whose log has ptxas's report.
import tessel as ts

DRY = "--dry-run" in sys.argv
BATCHES = [int(sys.argv[sys.argv.index("--batch") + 1])] if "--batch" in sys.argv else [1, 8]
NHWC = "--nhwc" in sys.argv
DTYPE = sys.argv[sys.argv.index("--dtype") + 1] if "--dtype" in sys.argv else "float32"
NAME = "conv2d_cuda" + ("_nhwc" if NHWC else "") + ("" if DTYPE == "float32" else "_" + DTYPE)


def layers():
    """(case name, (C, H, K, kernel, stride, padding), count) of the preset's 3x3 and 1x1 layers."""
    out = []
    for workload, p, count in ts.op.network_preset("resnet50"):
        if workload != "op.conv2d_nchw":
            continue
        n, c, h, w, k, kernel, stride, padding, dilation, groups = p[:10]
        if kernel[0] not in (1, 3):
            continue
        assert n == 1 and h == w and groups == 1 and list(dilation) == [1, 1]
        name = f"c{c}_h{h}_k{k}_{kernel[0]}x{kernel[0]}_s{stride[0]}"
        out.append((name, (c, h, k, kernel[0], stride[0], padding[0]), count))
    return out


def build(n, c, h, k, r, stride, pad, target, tuned=True):
    """The layer at batch n built with ts.op.default_schedule: the shipped logs' record when
    `tuned` (and they hold one), the default rules otherwise; and the schedule's steps as JSON."""
    if NHWC:
        x = ts.placeholder((n, h, h, c), dtype=DTYPE, name="x")
        w = ts.placeholder((r, r, c, k), dtype=DTYPE, name="w")
        y = ts.op.conv2d_nhwc(x, w, stride=stride, padding=pad)
    else:
        x = ts.placeholder((n, c, h, h), dtype=DTYPE, name="x")
        w = ts.placeholder((k, c, r, r), dtype=DTYPE, name="w")
        y = ts.op.conv2d_nchw(x, w, stride=stride, padding=pad)
    ts.auto_schedule.use_shipped_logs(tuned)
    try:
        s = ts.op.default_schedule(y, ts.Target(target))
    finally:
        ts.auto_schedule.use_shipped_logs(True)
    return ts.build(s, [x, w, y], target=target), s.to_json()


def ptxas_report(f):
    log = f.get_source("nvrtc_log").splitlines()
    return "; ".join(line.strip() for line in log if "Used" in line or "spill" in line)


def dry_run():
    for name, (c, h, k, r, stride, pad), count in layers():
        f, _ = build(1, c, h, k, r, stride, pad, "cuda -arch=sm_90", tuned=False)
        print(f"{name} x{count}: compiles for sm_90 ({ptxas_report(f)})")
    print("conv2d_cuda: dry run done (no GPU timing; tests/op checks the schedules' results)")


def main():
    import torch
    import torch.nn.functional as F

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
    import cuda_bench

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    assert not torch.backends.cudnn.allow_tf32 and torch.backends.cudnn.enabled
    gen = torch.Generator("cuda").manual_seed(1)
    lines = []
    for n in BATCHES:
        lines += run_batch(n, gen, cuda_bench, torch, F)
    print("\n".join(lines))


def run_batch(n, gen, cuda_bench, torch, F):
    """Every layer at batch n: a table line each, the BENCH lines returned."""
    lines, logs = [], {"rules": [], "tuned": [], "cudnn": []}
    shipped = 0
    lowest = (float("inf"), "")
    for name, (c, h, k, r, stride, pad), count in layers():
        name = f"b{n}_{name}"
        f, rules_json = build(n, c, h, k, r, stride, pad, "cuda", tuned=False)
        ft, tuned_json = build(n, c, h, k, r, stride, pad, "cuda")
        shipped += tuned_json != rules_json
        dtype = getattr(torch, DTYPE)
        x_ref = torch.randn(n, c, h, h, device="cuda", generator=gen).to(dtype)
        w_ref = (torch.randn(k, c, r, r, device="cuda", generator=gen) / math.sqrt(c * r * r)).to(
            dtype)
        ref = F.conv2d(x_ref.double(), w_ref.double(), stride=stride, padding=pad)
        x, w = x_ref, w_ref
        if NHWC:  # tessel's tensors NHWC and HWIO; cuDNN's the same data as channels_last
            x, w = x_ref.permute(0, 2, 3, 1).contiguous(), w_ref.permute(2, 3, 1, 0).contiguous()
            ref = ref.permute(0, 2, 3, 1).contiguous()
            x_ref = x_ref.contiguous(memory_format=torch.channels_last)
            w_ref = w_ref.contiguous(memory_format=torch.channels_last)
        bound = 1e-4 if DTYPE == "float32" else 1e-2
        for kernel, what in ((f, "the rules"), (ft, "the tuned schedule")):
            y = torch.full(ref.shape, float("nan"), device="cuda", dtype=dtype)
            kernel(x, w, y)
            torch.cuda.synchronize()
            err = cuda_bench.relative_error(y, ref)
            assert err < bound, f"tessel's conv2d ({what}) is wrong at {name}: relative error {err}"
        flops = 2.0 * ref.numel() * c * r * r
        t_rules = cuda_bench.median_ms(lambda: f(x, w, y))
        t_tuned = cuda_bench.median_ms(lambda: ft(x, w, y))
        t_torch = cuda_bench.median_ms(lambda: F.conv2d(x_ref, w_ref, stride=stride, padding=pad))
        g = {"rules": flops / t_rules / 1e6, "tuned": flops / t_tuned / 1e6,
             "cudnn": flops / t_torch / 1e6}
        lowest = min(lowest, (g["rules"] / g["cudnn"], name))
        note = "" if tuned_json != rules_json else " (no record)"
        print(f"{name:27s} x{count}  rules {g['rules']:8.1f}  tuned {g['tuned']:8.1f}{note}  "
              f"cudnn {g['cudnn']:8.1f} GFLOP/s  ratios {g['rules'] / g['cudnn']:.3f} "
              f"{g['tuned'] / g['cudnn']:.3f}  ({ptxas_report(f)})")
        lines.append(cuda_bench.bench_line(NAME, name, g["rules"], "cudnn", g["cudnn"]))
        lines.append(cuda_bench.bench_line(NAME, name + ",tuned", g["tuned"], "cudnn",
                                           g["cudnn"]))
        for key in logs:
            logs[key].append(math.log(g[key]))
    mean = {key: math.exp(sum(v) / len(v)) for key, v in logs.items()}
    print(f"batch {n}: rules geomean {mean['rules'] / mean['cudnn']:.3f} x cuDNN (lowest "
          f"{lowest[0]:.3f}, {lowest[1]}); tuned: {shipped} of {len(logs['cudnn'])} layers from "
          f"the shipped tuning logs ({ts.auto_schedule.shipped_logs_folder()})")
    lines.append(cuda_bench.bench_line(NAME, f"b{n}_geomean", mean["rules"], "cudnn",
                                       mean["cudnn"]))
    lines.append(cuda_bench.bench_line(NAME, f"b{n}_geomean,tuned", mean["tuned"],
                                       "cudnn", mean["cudnn"]))
    return lines


if __name__ == "__main__":
    dry_run() if DRY else main()
