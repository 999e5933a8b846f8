"""tune_gemm_cuda: tessel's tuner on the fp32 GEMM C = A @ B (row-major 4096^3; another size with
TESSEL_TUNE_GEMM_N) for `cuda`, then the best schedule against cuBLAS (torch.matmul, TF32 off) and the GPU GEMM
tutorial's final hand-written schedule (tutorials/05_gpu_gemm.py, step 6: the tiles chosen for
the shape, double-buffered shared tiles; step 7's cp.async is slower on the H100), timed
in one process. Resumable from its log (support/tune_cuda.py):

    benchmarks/run.sh tune_gemm_cuda --trials 1000 --max-seconds 480   # repeat until 1000
"""
import os
import sys

import tessel as ts
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import cuda_bench  # noqa: E402
import tune_cuda  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.set_float32_matmul_precision("highest")
assert not torch.backends.cuda.matmul.allow_tf32

N = int(os.environ.get("TESSEL_TUNE_GEMM_N", "4096"))


def main():
    a = tune_cuda.parse(__doc__.splitlines()[0], f"tune_gemm_cuda_n{N}.jsonl")
    task = ts.SearchTask("op.matmul", [N, N, N, 0, 0, "float32"], target="cuda")
    records = tune_cuda.tune(task, a)
    if not any(r.ok for r in records):
        return tune_cuda.report("tune_gemm_cuda", f"n={N}", records, 2.0 * N**3, "GFLOP/s",
                                None, None, None, "cublas")
    tuned = tune_cuda.build_best(task, a.log)
    sms = ts.Target("cuda").sm_count
    hand_s, hand_args = cuda_bench.tutorial("05_gpu_gemm").step6(N, sm_count=sms)
    hand = ts.build(hand_s, hand_args, target="cuda")
    g = torch.Generator(device="cuda").manual_seed(N)
    x = torch.randn(N, N, device="cuda", generator=g)
    y = torch.randn(N, N, device="cuda", generator=g)
    ref = x.double() @ y.double()
    outs = tune_cuda.check_kernels((("tuned", tuned), ("tutorial", hand)), x, y, ref, 1e-5)
    c = torch.empty(N, N, device="cuda")
    return tune_cuda.report("tune_gemm_cuda", f"n={N}", records, 2.0 * N**3, "GFLOP/s",
                            lambda: tuned(x, y, outs["tuned"]),
                            lambda: torch.matmul(x, y, out=c),
                            lambda: hand(x, y, outs["tutorial"]), "cublas")


if __name__ == "__main__":
    sys.exit(main())
