"""time_gemm_cuda_short_shared: the fp32 GEMM (4096^3) of tutorial 05's step 6 and the K fastest
records of each tuning log, each built without and with 32-bit shared addresses
(TESSEL_CUDA_SHORT_SHARED, docs/cuda.md), checked against a float64 reference and timed in 7
interleaved rounds with cuBLAS (CUDA events, median of 10 runs after 3 warm-up runs per round).

    python3 benchmarks/time_gemm_cuda_short_shared.py K benchmarks/logs/tune_gemm_cuda_4096_store.jsonl ...
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
N = 4096


def top(path, k):
    recs = []
    seen = set()
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r["result"]["error_code"] != "none":
            continue
        key = json.dumps(r["schedule"], sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        recs.append((statistics.median(r["result"]["costs"]), r["schedule"]))
    recs.sort(key=lambda x: x[0])
    return recs[:k]


def main():
    task = ts.SearchTask("op.matmul", [N, N, N, 0, 0, "float32"], target="cuda")
    args = list(task.dag.args)
    sms = ts.Target("cuda").sm_count
    hand_s, hand_args = cuda_bench.tutorial("05_gpu_gemm").step6(N, sm_count=sms)
    kernels = []
    for flag in ("0", "1"):
        os.environ["TESSEL_CUDA_SHORT_SHARED"] = flag
        kernels.append((f"tutorial/{flag}", ts.build(hand_s, hand_args, target="cuda")))
        for log in sys.argv[2:]:
            for i, (cost, sched) in enumerate(top(log, int(sys.argv[1]))):
                s = task.apply_record(json.dumps(sched))
                name = os.path.basename(log).replace(".jsonl", "")
                kernels.append((f"{name}#{i} ({2*N**3/cost/1e9:.0f} tuned)/{flag}",
                                ts.build(s, args, target="cuda")))
    g = torch.Generator(device="cuda").manual_seed(N)
    x = torch.randn(N, N, device="cuda", generator=g)
    y = torch.randn(N, N, device="cuda", generator=g)
    ref = x.double() @ y.double()
    c = torch.empty(N, N, device="cuda")
    timed = [("cublas", lambda: torch.matmul(x, y, out=c))]
    for label, k in kernels:
        out = torch.full((N, N), float("nan"), device="cuda")
        k(x, y, out)
        err = cuda_bench.relative_error(out, ref)
        assert err < 1e-5, f"{label} is wrong: {err}"
        timed.append((label, lambda k=k, out=out: k(x, y, out)))
    ms = {label: [] for label, _ in timed}
    for _ in range(7):
        for label, fn in timed:
            ms[label].append(cuda_bench.median_ms(fn, warmup=3, reps=10))
    gf = {label: [2.0 * N**3 / m / 1e9 for m in v] for label, v in ms.items()}
    cublas = statistics.median(gf["cublas"])
    for label, v in gf.items():
        g = statistics.median(v)
        print(f"{label}: {g:.0f} [{min(v):.0f}, {max(v):.0f}] ({g / cublas:.3f} x cuBLAS)")


if __name__ == "__main__":
    main()
