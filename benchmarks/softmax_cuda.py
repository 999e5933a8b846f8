"""softmax_cuda: row softmax of float32 matrices, 8192 x 8192 (long rows) and 4096 x 1000 (short
rows) by default, other shapes as ROWSxCOLS arguments, with the GPU softmax tutorial's schedule for
the row length (tutorials/06_gpu_softmax.py, best(): a warp per row up to 2048 columns, step 4,
else a block per row with the row in shared memory, step 2) against torch.softmax(x, dim=1). GB/s
counts the input read once and the output written once. Checked against a float64 softmax first;
median of 30 runs timed with CUDA events, the queue pre-filled. With --variants, the GB/s of every
tutorial step (and of step 3 with 2, 4 and 8 rows per block, with and without the rows in shared
memory) at each shape are printed first, to choose best()'s schedules on a new GPU."""
import os
import sys

# tessel before torch: the process then uses tessel's NVRTC, whose log has ptxas's report; the
# NVRTC of torch's wheel, loaded first, would be used instead and reports nothing (docs/cuda.md).
import tessel as ts
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import cuda_bench  # noqa: E402

softmax = cuda_bench.tutorial("06_gpu_softmax")
VARIANTS = [("step1", softmax.step1), ("step2", softmax.step2)] + [
    (f"step3 rows_per_block={r}{'' if sh else ' shared=False'}",
     lambda n, m, r=r, sh=sh: softmax.step3(n, m, r, sh)) for sh in (True, False) for r in (2, 4, 8)] + [
    (f"step3 rows_per_block={r} exp_once", lambda n, m, r=r: softmax.step3(n, m, r, True, True))
    for r in (1, 2, 4)] + [
    (f"step3 rows_per_block={r}{'' if sh else ' shared=False'} unroll",
     lambda n, m, r=r, sh=sh: softmax.step3(n, m, r, sh, False, True))
    for sh in (True, False) for r in (2, 4, 8)] + [
    (f"step3 rows_per_block={r} unroll reciprocal",
     lambda n, m, r=r: softmax.step3(n, m, r, True, False, True, True)) for r in (4, 8)]


def print_variants(n, m, x, y):
    nbytes = 2 * x.numel() * 4
    for name, make in VARIANTS:
        s, args = make(n, m)
        try:
            f = ts.build(s, args, target="cuda")
        except ts.ScheduleError as e:  # more shared memory than a block may have
            print(f"{n}x{m} {name}: {str(e).splitlines()[0]}")
            continue
        f(x, y)
        torch.cuda.synchronize()
        err = cuda_bench.relative_error(y, torch.softmax(x.double(), dim=1))
        gbs = nbytes / cuda_bench.median_ms(lambda: f(x, y)) / 1e6
        print(f"{n}x{m} {name}: {gbs:8.1f} GB/s (relative error {err:.1e})")


variants = "--variants" in sys.argv
lines = []
for shape in [a for a in sys.argv[1:] if a != "--variants"] or ["8192x8192", "4096x1000"]:
    n, m = (int(v) for v in shape.split("x"))
    s, args = softmax.best(n, m)
    f = ts.build(s, args, target="cuda")
    x = torch.randn(n, m, device="cuda", generator=torch.Generator("cuda").manual_seed(1))
    y = torch.full_like(x, float("nan"))
    if variants:
        print_variants(n, m, x, y)
        y.fill_(float("nan"))
    f(x, y)
    torch.cuda.synchronize()
    err = cuda_bench.relative_error(y, torch.softmax(x.double(), dim=1))
    kind = "a warp per row" if m <= softmax.WARP_ROW_MAX else "a block per row"
    print(f"{shape} ({kind}): relative error {err:.2e}")
    assert err < 1e-5, f"tessel's softmax is wrong: relative error {err}"
    nbytes = 2 * x.numel() * 4
    t_tessel = cuda_bench.median_ms(lambda: f(x, y))
    t_torch = cuda_bench.median_ms(lambda: torch.softmax(x, dim=1))
    lines.append(cuda_bench.bench_line("softmax_cuda", shape, nbytes / t_tessel / 1e6, "torch",
                                       nbytes / t_torch / 1e6))
print("\n".join(lines))
