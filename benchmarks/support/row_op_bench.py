"""What the row-wise operator benchmarks (layer_norm_cuda, softmax_op_cuda) share: an n x m float32
operator of ts.op under its default "cuda" schedule against PyTorch's, GB/s counting the input
read once and the output written once (the per-column vectors of a norm are negligible).

    main(bench, make, reference, default_shapes)

`make(n, m)` returns (inputs, output) as tessel tensors, the first input the n x m matrix and the
others vectors of m; `reference(x, *vectors)` is PyTorch's operator. With --dry-run nothing needs
a GPU or PyTorch: each shape's default schedule is built for sm_90 by NVRTC (ptxas's register and
spill report printed) and the same schedule at 3 rows is checked in tessel's loop interpreter
against a float64 NumPy reference (`numpy_reference`), so the benchmark's schedules are known to
build and be correct before the GPU host runs it.
"""
import os
import sys

import numpy as np

import tessel as ts

DRY_TARGET = "cuda -arch=sm_90"


def parse(argv, default_shapes):
    shapes = [a for a in argv if not a.startswith("--")] or default_shapes
    return [tuple(int(v) for v in s.split("x")) for s in shapes], "--dry-run" in argv


def build(make, n, m, target):
    inputs, y = make(n, m)
    s = ts.op.default_schedule(y, ts.Target(target))
    return ts.build(s, inputs + [y], target=target), s, inputs + [y]


def ptxas_report(f):
    log = f.get_source("nvrtc_log").splitlines()
    return "; ".join(line.strip() for line in log if "Used" in line or "spill" in line)


def dry_run(bench, make, numpy_reference, shapes):
    rng = np.random.default_rng(1)
    for n, m in shapes:
        f, _, _ = build(make, n, m, DRY_TARGET)
        print(f"{bench} {n}x{m}: compiles for sm_90 ({ptxas_report(f)})")
        _, s, args = build(make, 3, m, DRY_TARGET)
        arrays = [rng.standard_normal([int(d) for d in t.shape]).astype("float32")
                  for t in args[:-1]]
        out = np.full((3, m), np.nan, dtype="float32")
        ts.lower(s, args).run(*arrays, out)
        expected = numpy_reference(*[a.astype("float64") for a in arrays])
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
        print(f"{bench} 3x{m}: the same schedule is correct in the loop interpreter")
    print(f"{bench}: dry run done (no GPU timing)")


def main(bench, make, reference, numpy_reference, default_shapes):
    shapes, dry = parse(sys.argv[1:], default_shapes)
    if dry:
        dry_run(bench, make, numpy_reference, shapes)
        return
    import torch

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cuda_bench

    lines = []
    gen = torch.Generator("cuda").manual_seed(1)
    for n, m in shapes:
        f, _, args = build(make, n, m, "cuda")
        x = torch.randn(n, m, device="cuda", generator=gen)
        vectors = [torch.randn(m, device="cuda", generator=gen) for _ in args[1:-1]]
        y = torch.full_like(x, float("nan"))
        f(x, *vectors, y)
        torch.cuda.synchronize()
        err = cuda_bench.relative_error(y, reference(x.double(), *[v.double() for v in vectors]))
        print(f"{n}x{m}: relative error {err:.2e}; {ptxas_report(f)}")
        assert err < 1e-5, f"tessel's {bench} is wrong at {n}x{m}: relative error {err}"
        nbytes = 2 * x.numel() * 4
        t_tessel = cuda_bench.median_ms(lambda: f(x, *vectors, y))
        t_torch = cuda_bench.median_ms(lambda: reference(x, *vectors))
        lines.append(cuda_bench.bench_line(bench, f"{n}x{m}", nbytes / t_tessel / 1e6, "torch",
                                           nbytes / t_torch / 1e6))
    print("\n".join(lines))
