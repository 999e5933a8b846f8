"""Shared helpers of the GPU benchmarks (benchmarks/*_cuda.py): loading a tutorial's schedules,
timing with CUDA events after warm-up, and the BENCH line (docs/design.md, "Conventions that
tools rely on")."""
import statistics

import torch

from tutorial_loader import REPO, tutorial  # noqa: F401 (cuda_bench.REPO and .tutorial for the benchmarks)


def median_ms(fn, warmup=5, reps=30):
    """Median milliseconds of fn() over `reps` runs after `warmup` runs, each timed with CUDA
    events on the current stream. The queue is pre-filled (a GPU sleep of about 0.5 ms before the
    start event), so the time is the GPU's: the host's launch latency, which would otherwise count
    for a kernel of a few microseconds (a short-row softmax), is hidden behind the sleep. (A sleep
    of 0.1 ms was not always enough for a call of three launches: the same kernels of a small
    product read 0.2 and 1.1 x cuBLAS in one run.)"""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1_000_000)  # cycles
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def build_forced(force, value, output, inputs):
    """ts.build of `output`'s default "cuda" schedule with a private hook of the default
    (ts._tessel.op._force_...) set to `value` while it is scheduled, released after: the
    experiments that sweep a default's choices (benchmarks/experiments/*_tiles_cuda.py)."""
    import tessel as ts

    force(value)
    try:
        schedule = ts.op.default_schedule(output, "cuda")
    finally:
        force(None)
    return ts.build(schedule, inputs + [output], target="cuda")


def checked_ms(f, args, ref, reps=15):
    """f(*args, out) into a NaN-filled output checked against the float64 `ref` (relative error
    1e-4), then its median time in ms; None when the output is wrong. The sweeps of
    benchmarks/experiments/*_cuda.py."""
    import torch

    out = torch.full(ref.shape, float("nan"), device="cuda")
    f(*args, out)
    if relative_error(out, ref) > 1e-4:
        return None
    return median_ms(lambda: f(*args, out), reps=reps)


def relative_error(out, ref):
    """||out - ref|| / ||ref|| in float64; NaN anywhere fails."""
    out, ref = out.double(), ref.double()
    assert not torch.isnan(out).any(), "the output has NaN (unwritten elements?)"
    return (torch.linalg.norm(out - ref) / torch.linalg.norm(ref)).item()


def bench_line(name, case, tessel, ref_name, ref):
    return f"BENCH {name} {case} tessel={tessel:.1f} {ref_name}={ref:.1f} ratio={tessel / ref:.3f}"


def interleaved_gemm_report(kernels, n, rounds):
    """The fp32 n^3 GEMM kernels [(label, f(x, y, out))] each checked against a float64 reference
    (relative error below 1e-5), then timed with cuBLAS (TF32 off) in `rounds` interleaved rounds
    (each round times every kernel once: median_ms of 10 runs after 3 warm-up runs), so that no
    kernel is favoured by its place in the process. Prints per kernel the median TFLOP/s over the
    rounds, the rounds' range and the ratio to cuBLAS."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    g = torch.Generator(device="cuda").manual_seed(n)
    x = torch.randn(n, n, device="cuda", generator=g)
    y = torch.randn(n, n, device="cuda", generator=g)
    ref = x.double() @ y.double()
    c = torch.empty(n, n, device="cuda")
    timed = [("cublas", lambda: torch.matmul(x, y, out=c))]
    for label, k in kernels:
        out = torch.full((n, n), float("nan"), device="cuda")
        k(x, y, out)
        err = relative_error(out, ref)
        print(f"{label}: relative error {err:.1e}")
        assert err < 1e-5, f"{label} is wrong"
        timed.append((label, lambda k=k, out=out: k(x, y, out)))
    interleaved_rounds(timed, rounds, 2.0 * n**3, "cublas")


def interleaved_rounds(timed, rounds, flops, reference, digits=0):
    """Times the kernels [(label, fn)] in `rounds` interleaved rounds (each round times every
    kernel once: median_ms of 10 runs after 3 warm-up runs) and prints per kernel the median
    TFLOP/s over the rounds (`flops` a run), the rounds' range and the ratio to `reference`'s;
    returns the medians (TFLOP/s by label)."""
    ms = {label: [] for label, _ in timed}
    for _ in range(rounds):
        for label, fn in timed:
            ms[label].append(median_ms(fn, warmup=3, reps=10))
    tflops = {label: [flops / m / 1e9 for m in v] for label, v in ms.items()}
    ref = statistics.median(tflops[reference])
    print(f"{rounds} interleaved rounds; TFLOP/s median [lowest, highest round]")
    for label, v in tflops.items():
        med = statistics.median(v)
        print(f"{label}: {med:.{digits}f} [{min(v):.{digits}f}, {max(v):.{digits}f}] "
              f"({med / ref:.3f} x {reference})")
    return {label: statistics.median(v) for label, v in tflops.items()}


def fp16_gemm_inputs(n):
    """Random float16 n x n A and B (seeded by n) and their float64 product."""
    g = torch.Generator(device="cuda").manual_seed(n)
    a = torch.randn(n, n, device="cuda", generator=g).half()
    b = torch.randn(n, n, device="cuda", generator=g).half()
    return a, b, a.double() @ b.double()


def check_and_time_fp16_gemms(kernels, n, a, b, ref, rounds, peak):
    """The fp16 GEMM kernels [(label, run, out)] (run() writes the float32 product into out), each
    checked against ref (relative error below 1e-4), then timed with cuBLAS (torch.mm, float32
    output) in interleaved rounds; prints 0.7 x `peak` (GFLOP/s), issue 25's bar."""
    timed = [("cublas", lambda: torch.mm(a, b, out_dtype=torch.float32))]
    for label, run, out in kernels:
        out.fill_(float("nan"))
        run()
        err = relative_error(out, ref)
        assert err < 1e-4, f"{label} is wrong: {err}"
        timed.append((label, run))
    print(f"n={n}:")
    interleaved_rounds(timed, rounds, 2.0 * n**3, "cublas", digits=1)
    print(f"(0.7 x the mma.sync peak: {0.7 * peak / 1e3:.1f} TFLOP/s)")


def fp16_gemm_experiment(argv, peak_fn, make_kernels):
    """An issue-25 experiment's main: `[ROUNDS] [N ...]` from argv (default 5; 4096 8192), the
    register-only mma.sync peak (peak_fn(), GFLOP/s), then for each n the kernels of
    make_kernels(n, a, b) ([(label, run, out)]) checked and timed by check_and_time_fp16_gemms."""
    rounds = int(argv[0]) if argv else 5
    sizes = [int(x) for x in argv[1:]] or [4096, 8192]
    peak = peak_fn()
    print(f"register-only mma.sync peak: {peak / 1e3:.1f} TFLOP/s")
    for n in sizes:
        a, b, ref = fp16_gemm_inputs(n)
        check_and_time_fp16_gemms(make_kernels(n, a, b), n, a, b, ref, rounds, peak)


def matmul_default_under(ts, m, n, k, dtype, env, value):
    """The default "cuda" schedule of an m x n x k matmul of `dtype`, built with environment
    variable `env` set to `value` (a switch the build reads)."""
    import os

    os.environ[env] = value
    try:
        a = ts.placeholder((m, k), dtype=dtype, name="a")
        b = ts.placeholder((k, n), dtype=dtype, name="b")
        y = ts.op.matmul(a, b)
        return ts.build(ts.op.default_schedule(y, ts.Target("cuda")), [a, b, y], target="cuda")
    finally:
        del os.environ[env]


def compare_matmul_builds(ts, shapes, env, values, labels, dtypes, calls=1, only_differing=False):
    """Each shape's matmul default built under each value of switch `env` in one process, each
    called `calls` times and checked against a float64 product, then timed against PyTorch's
    product (cuBLAS) in 3 interleaved rounds of medians; prints each shape's kernel counts and
    ratios (`labels` names the builds), then each dtype's geometric means. With `only_differing`,
    shapes whose builds have the same kernel count are skipped."""
    import math

    gen = torch.Generator("cuda").manual_seed(1)
    for dtype in dtypes:
        tdt = getattr(torch, dtype)
        logs = [[] for _ in values]
        for m, n, k in shapes:
            fs = [matmul_default_under(ts, m, n, k, dtype, env, v) for v in values]
            counts = [f.get_source("cu").count("__global__") for f in fs]
            if only_differing and len(set(counts)) == 1:
                continue
            a = torch.randn((m, k), device="cuda", generator=gen).to(tdt)
            b = torch.randn((k, n), device="cuda", generator=gen).to(tdt)
            ref = a.double() @ b.double()
            outs = []
            for f in fs:
                y = torch.full((m, n), float("nan"), device="cuda", dtype=tdt)
                for _ in range(calls):
                    f(a, b, y)
                    torch.cuda.synchronize()
                    err = relative_error(y.double(), ref)
                    assert err < 2e-2, f"{dtype} {m}x{n}x{k}: relative error {err}"
                outs.append(y)
            ratios = [[] for _ in values]
            for _ in range(3):
                t_ref = median_ms(lambda: a @ b)
                for i, f in enumerate(fs):
                    ratios[i].append(t_ref / median_ms(lambda: f(a, b, outs[i])))
            x = [statistics.median(r) for r in ratios]
            for i in range(len(values)):
                logs[i].append(math.log(x[i]))
            parts = [f"{labels[i]} ({counts[i]} kernels) {x[i]:.3f}" for i in range(len(values))]
            print(f"{dtype} {m}x{n}x{k}: " + ", ".join(parts) + " x cuBLAS", flush=True)
        if logs[0]:
            g = [math.exp(sum(v) / len(v)) for v in logs]
            print(f"{dtype}: {len(logs[0])} shapes, geomean " +
                  ", ".join(f"{labels[i]} {g[i]:.3f}" for i in range(len(values))))
