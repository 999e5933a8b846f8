"""gemm_cuda: fp32 C = A @ B (row-major n x n, n = 4096; other sizes as arguments) with the GPU
GEMM tutorial's final schedule (tutorials/05_gpu_gemm.py, step 4) against cuBLAS through
torch.matmul with TF32 off (asserted, not assumed). Checks the result against a float64 product
first, prints ptxas's register and spill report of the kernel, then GFLOP/s (median of 30 runs
timed with CUDA events after 5 warm-up runs)."""
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
lines = []
for n in [int(a) for a in sys.argv[1:]] or [4096]:
    s, args = gemm.step4(n)
    f = ts.build(s, args, target="cuda")
    log = f.get_source("nvrtc_log")
    print("ptxas report of the kernel (NVRTC's log):\n" + (log or "(empty)"))
    if os.environ.get("OUT"):  # the GPU host's output folder: keep the kernel's source
        with open(os.path.join(os.environ["OUT"], f"gemm_cuda_n{n}.cu"), "w") as out:
            out.write(f.get_source("cu"))
    g = torch.Generator(device="cuda").manual_seed(n)
    a = torch.randn(n, n, device="cuda", generator=g)
    b = torch.randn(n, n, device="cuda", generator=g)
    c = torch.full((n, n), float("nan"), device="cuda")
    f(a, b, c)
    torch.cuda.synchronize()
    err = cuda_bench.relative_error(c, a.double() @ b.double())
    ref = torch.empty(n, n, device="cuda")
    ref_err = cuda_bench.relative_error(torch.matmul(a, b, out=ref), a.double() @ b.double())
    print(f"n={n}: relative error tessel {err:.2e}, cuBLAS {ref_err:.2e}")
    assert err < 1e-5, f"tessel's GEMM is wrong: relative error {err}"
    flop = 2.0 * n**3
    t_tessel = cuda_bench.median_ms(lambda: f(a, b, c))
    t_cublas = cuda_bench.median_ms(lambda: torch.matmul(a, b, out=ref))
    lines.append(cuda_bench.bench_line("gemm_cuda", f"n={n}", flop / t_tessel / 1e6, "cublas",
                                       flop / t_cublas / 1e6))
print("\n".join(lines))
