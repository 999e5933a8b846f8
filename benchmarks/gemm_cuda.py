"""gemm_cuda: fp32 C = A @ B (row-major; square n or M x N x K shapes) with the GPU GEMM
tutorial's final schedule (tutorials/05_gpu_gemm.py, step 6: register tile, double-buffered
shared tiles, tiles chosen for the shape by choose_tiles) against cuBLAS through torch.matmul
with TF32 off (asserted, not assumed). Checks each result against a float64 product first, prints ptxas's register and spill report of the kernel,
then GFLOP/s (median of 30 runs timed with CUDA events after 5 warm-up runs, queue pre-filled).

    python benchmarks/gemm_cuda.py [SHAPE ...]     SHAPE: n or MxNxK (default 4096 1000 1536x1000x777)
    python benchmarks/gemm_cuda.py --sweep [SHAPE ...]   every tile configuration (TILE_CONFIGS),
                                   with and without double buffering (how the choice was made);
                                   with --pipeline also with pipeline(3) and pipeline(4)
    python benchmarks/gemm_cuda.py --pipeline [SHAPE ...]   also step 7 (the same tiles, shared
                                   tiles copied by cp.async over 3 and 4 buffers: pipeline(3),
                                   pipeline(4)), BENCH lines gemm_cuda_pipeline3/4 against the
                                   same cuBLAS run, and their ratio to step 6 printed
Every shape also times the operator library's rule-based schedule (ts.op.default_schedule with
the shipped tuning logs off: what build() gives an untuned matmul), its ratio to step 6 printed
and a BENCH line gemm_cuda_rules against the same cuBLAS run.
"""
import os
import sys

# tessel before torch: the process then uses tessel's NVRTC, whose log has ptxas's report; the
# NVRTC of torch's wheel, loaded first, would be used instead and reports nothing (docs/cuda.md).
import tessel as ts
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import cuda_bench  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.set_float32_matmul_precision("highest")
assert not torch.backends.cuda.matmul.allow_tf32
assert torch.get_float32_matmul_precision() == "highest"

gemm = cuda_bench.tutorial("05_gpu_gemm")


def parse_shape(text):
    dims = [int(x) for x in text.split("x")]
    return (dims[0],) * 3 if len(dims) == 1 else tuple(dims)


def rules_schedule(m, n, k):
    """The operator library's rule-based schedule of an m x n x k matmul (no shipped log)."""
    a = ts.placeholder((m, k), name="A")
    b = ts.placeholder((k, n), name="B")
    c = ts.op.matmul(a, b)
    ts.auto_schedule.use_shipped_logs(False)
    try:
        return ts.op.default_schedule(c, "cuda"), [a, b, c]
    finally:
        ts.auto_schedule.use_shipped_logs(True)


def run_case(m, n, k, config, report):
    """GFLOP/s of tessel's kernel for one tile configuration (checked first), or None if the
    configuration does not fit the shape; config "rules": the operator library's schedule."""
    if config == "rules":
        s, args = rules_schedule(m, n, k)
    else:
        s, args = gemm.step4(n, m=m, k=k, **config)
    f = ts.build(s, args, target="cuda")
    if report:
        log = f.get_source("nvrtc_log")
        lines = [x for x in (log or "").splitlines() if "Used" in x or "spill" in x]
        print("ptxas report of the kernel (NVRTC's log):\n" + ("\n".join(lines) or "(empty)"))
        if os.environ.get("OUT"):  # the GPU host's output folder: keep the kernel's source
            tag = "_rules" if config == "rules" else ""
            name = f"gemm_cuda{tag}_{m}x{n}x{k}.cu"
            with open(os.path.join(os.environ["OUT"], name), "w") as out:
                out.write(f.get_source("cu"))
    g = torch.Generator(device="cuda").manual_seed(m * 7 + n * 3 + k)
    a = torch.randn(m, k, device="cuda", generator=g)
    b = torch.randn(k, n, device="cuda", generator=g)
    c = torch.full((m, n), float("nan"), device="cuda")
    f(a, b, c)
    torch.cuda.synchronize()
    err = cuda_bench.relative_error(c, a.double() @ b.double())
    assert err < 1e-5, f"tessel's GEMM is wrong at {m}x{n}x{k} {config}: relative error {err}"
    return 2.0 * m * n * k / cuda_bench.median_ms(lambda: f(a, b, c)) / 1e6, err


def cublas(m, n, k):
    g = torch.Generator(device="cuda").manual_seed(1)
    a = torch.randn(m, k, device="cuda", generator=g)
    b = torch.randn(k, n, device="cuda", generator=g)
    ref = torch.empty(m, n, device="cuda")
    err = cuda_bench.relative_error(torch.matmul(a, b, out=ref), a.double() @ b.double())
    return 2.0 * m * n * k / cuda_bench.median_ms(lambda: torch.matmul(a, b, out=ref)) / 1e6, err


def main():
    sweep = "--sweep" in sys.argv
    shapes = [parse_shape(a) for a in sys.argv[1:] if not a.startswith("--")]
    shapes = shapes or [(4096,) * 3, (1000,) * 3, (1536, 1000, 777)]
    sms = ts.Target("cuda").sm_count
    lines = []
    for m, n, k in shapes:
        case = f"n={m}" if m == n == k else f"{m}x{n}x{k}"
        ref, ref_err = cublas(m, n, k)
        if sweep:
            buffering = [dict(double_buffer=False), dict(double_buffer=True)]
            if "--pipeline" in sys.argv:
                buffering += [dict(pipeline=3), dict(pipeline=4)]
            for tiles in gemm.TILE_CONFIGS:
                for extra in buffering:
                    config = dict(tiles, **extra)
                    gflops, _ = run_case(m, n, k, config, report=False)
                    print(f"sweep {case} {config}: {gflops:.1f} GFLOP/s = "
                          f"{gflops / ref:.3f} x cuBLAS")
        config = gemm.choose_tiles(m, n, k, sms)
        print(f"{case}: tiles {config}")
        gflops, err = run_case(m, n, k, config, report=True)
        print(f"{case}: relative error tessel {err:.2e}, cuBLAS {ref_err:.2e}")
        lines.append(cuda_bench.bench_line("gemm_cuda", case, gflops, "cublas", ref))
        r, r_err = run_case(m, n, k, "rules", report=True)
        print(f"{case}: operator library's rules {r:.1f} GFLOP/s = {r / gflops:.3f} x step 6, "
              f"relative error {r_err:.2e}")
        lines.append(cuda_bench.bench_line("gemm_cuda_rules", case, r, "cublas", ref))
        if "--pipeline" in sys.argv:
            for depth in (3, 4):
                piped = dict(config, double_buffer=False, pipeline=depth)
                p, p_err = run_case(m, n, k, piped, report=True)
                print(f"{case}: pipeline({depth}) {p:.1f} GFLOP/s = {p / gflops:.3f} x step 6, "
                      f"relative error {p_err:.2e}")
                lines.append(cuda_bench.bench_line(f"gemm_cuda_pipeline{depth}", case, p,
                                                   "cublas", ref))
    print("\n".join(lines))


main()
