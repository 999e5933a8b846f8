"""time_gemm_cuda_states: times given schedules of the fp32 GEMM (4096^3, `cuda`) against cuBLAS
and tutorial 05's step 6 in one process, each checked against a float64 reference first, then
timed in interleaved rounds (each round times every kernel in turn: CUDA events, the median of
10 runs after 3 warm-up runs; the figure is the median over the rounds, with the rounds' range),
so that a kernel timed early or late in the process is not favoured. The schedules come as JSON lines
{"label": ..., "schedule": <Schedule::to_json>}, e.g. those bench_gpu_search_diagnosis writes:
is a search space's state as fast as the hand-written schedule it equals?

    python3 benchmarks/time_gemm_cuda_states.py benchmarks/logs/gemm_cuda_4096_step6_states.jsonl [ROUNDS]
"""
import json
import os
import statistics
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
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    c = torch.empty(N, N, device="cuda")
    timed = [("cublas", lambda: torch.matmul(x, y, out=c))]
    for label, k in kernels:
        out = torch.full((N, N), float("nan"), device="cuda")
        k(x, y, out)
        err = cuda_bench.relative_error(out, ref)
        print(f"{label}: relative error {err:.1e}")
        assert err < 1e-5, f"{label} is wrong"
        timed.append((label, lambda k=k, out=out: k(x, y, out)))
    ms = {label: [] for label, _ in timed}
    for _ in range(rounds):
        for label, fn in timed:
            ms[label].append(cuda_bench.median_ms(fn, warmup=3, reps=10))
    gflops = {label: [2.0 * N**3 / m / 1e9 for m in v] for label, v in ms.items()}
    cublas = statistics.median(gflops["cublas"])
    print(f"{rounds} interleaved rounds; GFLOP/s median [lowest, highest round]")
    for label, v in gflops.items():
        g = statistics.median(v)
        print(f"{label}: {g:.0f} [{min(v):.0f}, {max(v):.0f}] ({g / cublas:.3f} x cuBLAS)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
