"""softmax_cuda: row softmax of an 8192 x 8192 float32 matrix (other shapes as ROWSxCOLS
arguments) with the GPU softmax tutorial's final schedule (tutorials/06_gpu_softmax.py, step 2)
against torch.softmax(x, dim=1). GB/s counts the input read once and the output written once.
Checked against a float64 softmax first; median of 30 runs timed with CUDA events."""
import os
import sys

# tessel before torch: the process then uses tessel's NVRTC, whose log has ptxas's report; the
# NVRTC of torch's wheel, loaded first, would be used instead and reports nothing (docs/cuda.md).
import tessel as ts
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import cuda_bench  # noqa: E402

softmax = cuda_bench.tutorial("06_gpu_softmax")
lines = []
for shape in sys.argv[1:] or ["8192x8192"]:
    n, m = (int(v) for v in shape.split("x"))
    s, args = softmax.step2(n, m)
    f = ts.build(s, args, target="cuda")
    x = torch.randn(n, m, device="cuda", generator=torch.Generator("cuda").manual_seed(1))
    y = torch.full_like(x, float("nan"))
    f(x, y)
    torch.cuda.synchronize()
    err = cuda_bench.relative_error(y, torch.softmax(x.double(), dim=1))
    print(f"{shape}: relative error {err:.2e}")
    assert err < 1e-5, f"tessel's softmax is wrong: relative error {err}"
    nbytes = 2 * x.numel() * 4
    t_tessel = cuda_bench.median_ms(lambda: f(x, y))
    t_torch = cuda_bench.median_ms(lambda: torch.softmax(x, dim=1))
    lines.append(cuda_bench.bench_line("softmax_cuda", shape, nbytes / t_tessel / 1e6, "torch",
                                       nbytes / t_torch / 1e6))
print("\n".join(lines))
