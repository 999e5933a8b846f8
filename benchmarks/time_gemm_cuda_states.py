"""time_gemm_cuda_states: times given schedules of the fp32 GEMM (4096^3, `cuda`) against cuBLAS
and tutorial 05's step 6 in one process (CUDA events, median of 30 runs after 5 warm-up runs),
each checked against a float64 reference first. The schedules come as JSON lines
{"label": ..., "schedule": <Schedule::to_json>}, e.g. those bench_gpu_search_diagnosis writes:
is a search space's state as fast as the hand-written schedule it equals?

    python3 benchmarks/time_gemm_cuda_states.py benchmarks/logs/gemm_cuda_4096_step6_states.jsonl
"""
import json
import os
import sys

import tessel as ts
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import cuda_bench  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.set_float32_matmul_precision("highest")

N = 4096


def main():
    path = sys.argv[1]
    task = ts.SearchTask("op.matmul", [N, N, N, 0, 0, "float32"], target="cuda")
    args = list(task.dag.args)
    sms = ts.Target("cuda").sm_count
    hand_s, hand_args = cuda_bench.tutorial("05_gpu_gemm").step6(N, sm_count=sms)
    kernels = [("tutorial step6", ts.build(hand_s, hand_args, target="cuda"))]
    with open(path) as f:
        for line in f:
            state = json.loads(line)
            schedule = task.apply_record(json.dumps(state["schedule"]))
            kernels.append((state["label"], ts.build(schedule, args, target="cuda")))
    g = torch.Generator(device="cuda").manual_seed(N)
    x = torch.randn(N, N, device="cuda", generator=g)
    y = torch.randn(N, N, device="cuda", generator=g)
    ref = x.double() @ y.double()
    c = torch.empty(N, N, device="cuda")
    cublas = 2.0 * N**3 / cuda_bench.median_ms(lambda: torch.matmul(x, y, out=c)) / 1e9
    print(f"cublas: {cublas:.0f} GFLOP/s")
    for label, k in kernels:
        out = torch.full((N, N), float("nan"), device="cuda")
        k(x, y, out)
        err = cuda_bench.relative_error(out, ref)
        gf = 2.0 * N**3 / cuda_bench.median_ms(lambda: k(x, y, out)) / 1e9
        print(f"{label}: {gf:.0f} GFLOP/s ({gf / cublas:.3f} x cuBLAS), relative error {err:.1e}")
        assert err < 1e-5, f"{label} is wrong"
    return 0


if __name__ == "__main__":
    sys.exit(main())
