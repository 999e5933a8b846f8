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
import sys

import tessel as ts

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import cuda_bench  # noqa: E402

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
            try:
                schedule = task.apply_record(json.dumps(state["schedule"]))
                kernels.append((state["label"], ts.build(schedule, args, target="cuda")))
            except ts.TesselError as e:  # e.g. more shared memory than a block may have
                print(f"{state['label']}: not built: {str(e).splitlines()[0]}")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    cuda_bench.interleaved_gemm_report(kernels, N, rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
