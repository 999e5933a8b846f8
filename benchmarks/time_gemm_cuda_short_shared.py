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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import cuda_bench  # noqa: E402

N = 4096


def top(path, k):
    """The k fastest distinct schedules of a log: [(median seconds, schedule JSON)]."""
    recs = []
    seen = set()
    with open(path) as f:
        lines = f.readlines()
    for line in lines:
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
                kernels.append((f"{name}#{i} ({2 * N**3 / cost / 1e9:.0f} tuned)/{flag}",
                                ts.build(s, args, target="cuda")))
    cuda_bench.interleaved_gemm_report(kernels, N, 7)


if __name__ == "__main__":
    main()
