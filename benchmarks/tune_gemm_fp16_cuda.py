"""tune_gemm_fp16_cuda: tessel's tuner on the fp16 GEMM with fp32 accumulation C = A @ B
(workload matmul_mixed, row-major 4096^3; another size with TESSEL_TUNE_GEMM_N, bfloat16 operands
with TESSEL_TUNE_GEMM_DTYPE=bfloat16) for `cuda`, whose
space is the tensor-core sketch (multi_level_tiling_tensor_core, sm_80+) and, on Hopper (sm_90a),
the wgmma sketches (multi_level_tiling_wgmma), then the best schedule against cuBLAS (torch.mm on
fp16 with fp32 accumulation, as benchmarks/gemm_fp16_cuda.py) and the tutorial's best
hand-written schedule (tutorials/07_tensor_core_gemm.py step 6; on Hopper
tutorials/08_hopper_gemm.py step 4), timed in one process. Resumable from its log
(support/tune_cuda.py):

    benchmarks/run.sh tune_gemm_fp16_cuda --trials 1000 --max-seconds 480   # repeat until 1000

With --no-default the search runs alone (the default schedule is not its first trial) and the
report times the default schedule too: how close the search comes to it (issue 59's report).
"""
import os
import sys

import tessel as ts
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import cuda_bench  # noqa: E402
import tune_cuda  # noqa: E402

torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
assert not torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction

N = int(os.environ.get("TESSEL_TUNE_GEMM_N", "4096"))
DTYPE = os.environ.get("TESSEL_TUNE_GEMM_DTYPE", "float16")
if DTYPE not in ("float16", "bfloat16"):
    sys.exit(f"TESSEL_TUNE_GEMM_DTYPE={DTYPE}: float16 or bfloat16")
# Logs and BENCH lines of the bfloat16 tuning carry its name; float16's keep theirs.
CASE = f"n={N}" + ("" if DTYPE == "float16" else f" dtype={DTYPE}")


def cublas_mm(x, y):
    try:
        torch.mm(x[:16, :16], y[:16, :16], out_dtype=torch.float32)
        return lambda: torch.mm(x, y, out_dtype=torch.float32)
    except (TypeError, RuntimeError):  # an older torch: float16 output
        return lambda: torch.mm(x, y)


def main():
    suffix = "" if DTYPE == "float16" else f"_{DTYPE}"
    a = tune_cuda.parse(__doc__.splitlines()[0], f"tune_gemm_fp16_cuda_n{N}{suffix}.jsonl")
    task = ts.SearchTask("matmul_mixed", [N, N, N, DTYPE], target="cuda")
    records = tune_cuda.tune(task, a)
    if not any(r.ok for r in records):
        return tune_cuda.report("tune_gemm_fp16_cuda", CASE, records, 2.0 * N**3, "GFLOP/s",
                                None, None, None, "cublas")
    tuned = tune_cuda.build_best(task, a.log)
    if torch.cuda.get_device_capability() == (9, 0):
        hand_s, hand_args = cuda_bench.tutorial("08_hopper_gemm").step4(N, N, N, DTYPE)
    else:
        hand_s, hand_args = cuda_bench.tutorial("07_tensor_core_gemm").step6(N, N, N, DTYPE)
    hand = ts.build(hand_s, hand_args, target="cuda")
    g = torch.Generator(device="cuda").manual_seed(N)
    x = torch.randn(N, N, device="cuda", generator=g).to(getattr(torch, DTYPE))
    y = torch.randn(N, N, device="cuda", generator=g).to(getattr(torch, DTYPE))
    # The reference in float32 (TF32 off: products of halves exact, sums in float32), as the
    # kernels accumulate; a float64 product on the GPU failed with std::bad_alloc on the H100
    # host after a tuning.
    assert not torch.backends.cuda.matmul.allow_tf32
    ref = x.float() @ y.float()
    kernels = [("tuned", tuned), ("tutorial", hand)]
    if a.no_default:  # the search alone, against the default schedule it was not given
        ts.auto_schedule.use_shipped_logs(False)
        dag = task.dag
        default_s = ts.op.default_schedule(list(dag.outputs), ts.Target("cuda"))
        kernels.append(("default", ts.build(default_s, list(dag.args), target="cuda")))
    outs = tune_cuda.check_kernels(kernels, x, y, ref, 1e-4)
    run = dict(kernels)
    return tune_cuda.report("tune_gemm_fp16_cuda", CASE, records, 2.0 * N**3, "GFLOP/s",
                            lambda: tuned(x, y, outs["tuned"]), cublas_mm(x, y),
                            lambda: hand(x, y, outs["tutorial"]), "cublas",
                            default=(lambda: run["default"](x, y, outs["default"]))
                            if a.no_default else None)


if __name__ == "__main__":
    sys.exit(main())
