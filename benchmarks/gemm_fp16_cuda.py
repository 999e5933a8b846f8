"""gemm_fp16_cuda: C (float32) = A (float16) @ B (float16), fp32 accumulation, square n, with the
tensor-core tutorial's final schedule (tutorials/07_tensor_core_gemm.py, step 6: mma.sync
m16n8k16, ldmatrix, 128 x 256 tiles, k tiles of 64, swizzled shared tiles pipelined over 4
buffers by cp.async)
and, for comparison, its step 3 (128 x 128 tiles, double_buffer), against, in the same run:
  - the register-only mma.sync peak: a kernel doing nothing but independent mma.sync.m16n8k16
    (fp16 -> fp32) on registers, the ceiling of this instruction on this GPU;
  - cuBLAS through torch.matmul on fp16 inputs with fp32 accumulation
    (torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False, asserted), its
    output in float32 where torch offers it (out_dtype), else in float16 (said in the output);
  - Triton's GEMM (support/triton_gemm.py; where triton is installed), the fastest of a few
    configurations, compiled as Triton does on sm_90 (wgmma) and compiled to mma.sync
    (DISABLE_MMA_V3=1): what another compiler reaches with each instruction.
Checks tessel's result against a float64 product first, prints ptxas's report and whether the
kernel's SASS has HMMA instructions (cuobjdump or nvdisasm, where the host has one), then GFLOP/s
(median of 30 runs timed with CUDA events after 5 warm-up runs, queue pre-filled), and BENCH lines:
  BENCH gemm_fp16_cuda n=N tessel=... mma_peak=... ratio=...    (the issue's bar: >= 0.7)
  BENCH gemm_fp16_cuda n=N tessel=... cublas=... ratio=...
  BENCH gemm_fp16_cuda n=N tessel=... triton_wgmma=... ratio=...        (where triton is)
  BENCH gemm_fp16_cuda n=N tessel=... triton_mma_sync=... ratio=...

    python benchmarks/gemm_fp16_cuda.py [--step 4|5] [N ...]     (default 4096 8192)

--step 4 or 5 times the tutorial's step 4 (padded shared tiles, k tiles of 32) or step 5 (swizzled,
k tiles of 32) instead; their cases are named n=N,step=S.

On Hopper (compute capability 9.0) it then times Hopper's warp-group tensor cores: tutorial 08's
wgmma GEMM (tutorials/08_hopper_gemm.py: steps 1 and 2, the latter with blocks numbered 8 block
rows at a time) for float16 and bfloat16 inputs against cuBLAS (torch.mm, float32 output) and
Triton's wgmma GEMM (its best configuration, chosen once), all with float32 output, in 5
interleaved rounds (median), after checking each against float64 and HGMMA in tessel's SASS:
  BENCH gemm_fp16_cuda n=N,dtype=D,step=S tessel=... cublas=... ratio=...
  BENCH gemm_fp16_cuda n=N,dtype=D,step=S tessel=... triton_wgmma=... ratio=...
`--hopper` times only that part.
"""
import ctypes
import os
import sys

# tessel before torch: the process then uses tessel's NVRTC (docs/cuda.md).
import tessel as ts
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import cuda_bench  # noqa: E402
import nvrtc_kernel  # noqa: E402
import triton_gemm  # noqa: E402

torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
assert not torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction

tc = cuda_bench.tutorial("07_tensor_core_gemm")
hopper = cuda_bench.tutorial("08_hopper_gemm")

# Independent accumulators per warp (enough to cover mma.sync's latency), iterations per launch.
PEAK_CHAINS, PEAK_ITERS = 8, 4096
PEAK_SOURCE = r"""
extern "C" __global__ void mma_peak(float* out, int iters) {
    unsigned a[4], b[2];
    for (int r = 0; r < 4; ++r) a[r] = 0x3c003c00u;  // 1.0, 1.0 (float16)
    for (int r = 0; r < 2; ++r) b[r] = 0x3c003c00u;
    float d[CHAINS][4];
    for (int u = 0; u < CHAINS; ++u)
        for (int e = 0; e < 4; ++e) d[u][e] = 0.0f;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < CHAINS; ++u)
            asm volatile(
                "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                : "+f"(d[u][0]), "+f"(d[u][1]), "+f"(d[u][2]), "+f"(d[u][3])
                : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
    float s = 0.0f;
    for (int u = 0; u < CHAINS; ++u)
        for (int e = 0; e < 4; ++e) s += d[u][e];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
""".replace("CHAINS", str(PEAK_CHAINS))


def arch():
    major, minor = torch.cuda.get_device_capability()
    return f"sm_{major}{minor}"


def mma_peak():
    """GFLOP/s of the register-only mma.sync kernel: 4 warps per block, 8 blocks per SM."""
    kernel = nvrtc_kernel.Kernel(nvrtc_kernel.compile_cubin(PEAK_SOURCE, arch()), "mma_peak")
    blocks, threads = 8 * torch.cuda.get_device_properties(0).multi_processor_count, 128
    out = torch.empty(blocks * threads, device="cuda")
    args = [ctypes.c_void_p(out.data_ptr()), ctypes.c_int(PEAK_ITERS)]
    stream = torch.cuda.current_stream().cuda_stream
    ms = cuda_bench.median_ms(lambda: kernel.launch((blocks, 1, 1), (threads, 1, 1), args, stream))
    # Every mma adds 16 (1.0 * 1.0 over k) to each element: the sum is exact in float32.
    assert out[0].item() == PEAK_CHAINS * 4 * 16 * PEAK_ITERS, "the peak kernel computed wrong"
    flops = 2.0 * 16 * 8 * 16 * PEAK_CHAINS * PEAK_ITERS * (blocks * threads // 32)
    return flops / ms / 1e6


def check_sass(f, instruction="HMMA", target_arch=None):
    source = f.get_source("cu")
    listing = nvrtc_kernel.sass(nvrtc_kernel.compile_cubin(source, target_arch or arch()))
    if listing is None:
        return "no cuobjdump or nvdisasm on this host: SASS not listed"
    count = sum(1 for line in listing.splitlines() if instruction in line)
    ldsm = sum(1 for line in listing.splitlines() if "LDSM" in line)
    assert count > 0, f"no {instruction} instruction in the kernel's SASS"
    return f"SASS: {count} {instruction}, {ldsm} LDSM instructions"


def run_tessel(n, step=tc.step6):
    s, args = step(n, n, n)
    f = ts.build(s, args, target="cuda")
    log = f.get_source("nvrtc_log") or ""
    lines = [x for x in log.splitlines() if "Used" in x or "spill" in x]
    print(f"ptxas report of {step.__name__}'s kernel (NVRTC's log):\n" +
          ("\n".join(lines) or "(empty)"))
    print(check_sass(f))
    if os.environ.get("OUT"):  # the GPU host's output folder: keep the kernel's source
        name = f"gemm_fp16_cuda_{n}_{step.__name__}.cu"
        with open(os.path.join(os.environ["OUT"], name), "w") as out:
            out.write(f.get_source("cu"))
    g = torch.Generator(device="cuda").manual_seed(n)
    a = torch.randn(n, n, device="cuda", generator=g).half()
    b = torch.randn(n, n, device="cuda", generator=g).half()
    c = torch.full((n, n), float("nan"), device="cuda")
    f(a, b, c)
    torch.cuda.synchronize()
    err = cuda_bench.relative_error(c, a.double() @ b.double())
    assert err < 1e-4, f"tessel's fp16 GEMM is wrong at n={n}: relative error {err}"
    return 2.0 * n ** 3 / cuda_bench.median_ms(lambda: f(a, b, c)) / 1e6, err


def cublas(n):
    g = torch.Generator(device="cuda").manual_seed(1)
    a = torch.randn(n, n, device="cuda", generator=g).half()
    b = torch.randn(n, n, device="cuda", generator=g).half()
    try:
        torch.mm(a, b, out_dtype=torch.float32)
        mm, out = (lambda: torch.mm(a, b, out_dtype=torch.float32)), "float32"
    except (TypeError, RuntimeError):
        mm, out = (lambda: torch.mm(a, b)), "float16"
    err = cuda_bench.relative_error(mm().float(), a.double() @ b.double())
    return 2.0 * n ** 3 / cuda_bench.median_ms(mm) / 1e6, err, out


HOPPER_STEPS = [("1", lambda n, dtype: hopper.step1(n, n, n, dtype)),
                ("2", lambda n, dtype: hopper.step2(n, n, n, dtype)),
                ("2,group=8", lambda n, dtype: hopper.step2(n, n, n, dtype, group=8)),
                ("3", lambda n, dtype: hopper.step3(n, n, n, dtype)),
                ("3,group=8", lambda n, dtype: hopper.step3(n, n, n, dtype, group=8)),
                ("4", lambda n, dtype: hopper.step4(n, n, n, dtype)),
                ("5", lambda n, dtype: hopper.step5(n, n, n, dtype)),
                ("7", lambda n, dtype: hopper.step7(n, n, n, dtype))]


def hopper_gemms(sizes, rounds=5):
    """Tutorial 08's wgmma steps against cuBLAS and Triton's wgmma GEMM, float16 and bfloat16."""
    lines = []
    for n in sizes:
        for dtype, torch_dtype in (("float16", torch.float16), ("bfloat16", torch.bfloat16)):
            g = torch.Generator(device="cuda").manual_seed(n)
            a = torch.randn(n, n, device="cuda", generator=g).to(torch_dtype)
            b = torch.randn(n, n, device="cuda", generator=g).to(torch_dtype)
            product = a.double() @ b.double()
            timed = [("cublas", lambda: torch.mm(a, b, out_dtype=torch.float32))]
            err = cuda_bench.relative_error(timed[0][1](), product)
            print(f"n={n} {dtype}: cuBLAS relative error {err:.2e}")
            for label, make in HOPPER_STEPS:
                s, args = make(n, dtype)
                f = ts.build(s, args, target="cuda -arch=sm_90a")
                log = f.get_source("nvrtc_log") or ""
                report = [x for x in log.splitlines() if "Used" in x or "spill" in x]
                print(f"tutorial 08 step {label} ({dtype}): " + "; ".join(report) + "; " +
                      check_sass(f, "HGMMA", "sm_90a"))
                out = torch.full((n, n), float("nan"), device="cuda")
                f(a, b, out)
                torch.cuda.synchronize()
                err = cuda_bench.relative_error(out, product)
                assert err < 1e-4, f"tutorial 08 step {label} is wrong: {err}"
                print(f"tutorial 08 step {label} ({dtype}): relative error {err:.2e}")
                timed.append((f"step{label}", lambda f=f, out=out: f(a, b, out)))
            if triton_gemm.available():
                t, config, t_err = triton_gemm.best(n, a, b, product, False)
                out = torch.empty((n, n), device="cuda")
                run = triton_gemm.kernel(n, a, b, out, config, False, verbose=False)
                print(f"Triton wgmma ({dtype}): configuration {config}, relative error "
                      f"{t_err:.2e}")
                timed.append(("triton_wgmma", run))
            print(f"n={n} {dtype}:")
            med = cuda_bench.interleaved_rounds(timed, rounds, 2.0 * n**3, "cublas", digits=1)
            for label, _ in HOPPER_STEPS:
                case = f"n={n},dtype={dtype},step={label}"
                for ref in ("cublas", "triton_wgmma"):
                    if ref in med:
                        lines.append(cuda_bench.bench_line(
                            "gemm_fp16_cuda", case, med[f"step{label}"] * 1e3, ref,
                            med[ref] * 1e3))
            del a, b, product
    return lines


def main():
    argv, step = sys.argv[1:], 6
    if argv[:1] == ["--hopper"]:
        assert arch() == "sm_90", "--hopper needs a compute-capability-9.0 GPU"
        print("\n".join(hopper_gemms([int(x) for x in argv[1:]] or [4096, 8192])))
        return
    if argv[:1] == ["--step"]:
        step, argv = int(argv[1]), argv[2:]
    assert step in (4, 5, 6), "--step takes 4, 5 or 6"
    sizes = [int(x) for x in argv] or [4096, 8192]
    peak = mma_peak()
    print(f"register-only mma.sync.m16n8k16 fp16->fp32 peak: {peak / 1e3:.1f} TFLOP/s")
    lines = []
    for n in sizes:
        case = f"n={n}" if step == 6 else f"n={n},step={step}"
        ref, ref_err, ref_out = cublas(n)
        gflops, err = run_tessel(n, getattr(tc, f"step{step}"))
        step3, _ = run_tessel(n, tc.step3)
        print(f"{case}: tessel {gflops / 1e3:.1f} TFLOP/s (relative error {err:.2e}; step 3: "
              f"{step3 / 1e3:.1f}), cuBLAS {ref / 1e3:.1f} TFLOP/s ({ref_out} output, relative "
              f"error {ref_err:.2e})")
        lines.append(cuda_bench.bench_line("gemm_fp16_cuda", case, gflops, "mma_peak", peak))
        lines.append(cuda_bench.bench_line("gemm_fp16_cuda", case, gflops, "cublas", ref))
        if not triton_gemm.available():
            print("triton is not installed: no Triton reference")
            continue
        a, b, product = cuda_bench.fp16_gemm_inputs(n)
        for mma_sync, name in ((False, "triton_wgmma"), (True, "triton_mma_sync")):
            t, config, t_err = triton_gemm.best(n, a, b, product, mma_sync)
            print(f"{case}: Triton {'mma.sync' if mma_sync else 'wgmma'} {t / 1e3:.1f} TFLOP/s "
                  f"= {t / peak:.3f} x the mma.sync peak (best of its configurations: {config}; "
                  f"relative error {t_err:.2e})")
            lines.append(cuda_bench.bench_line("gemm_fp16_cuda", case, gflops, name, t))
        del a, b, product
    if arch() == "sm_90" and step == 6:
        lines += hopper_gemms(sizes)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
