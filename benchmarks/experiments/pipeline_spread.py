"""Is spreading a pipelined loop's cp.async copies over its computation's iterations faster than
issuing them after the computation? Builds each pipelined kernel twice in one process, with
TESSEL_PIPELINE_SPREAD=0 (after) and =1 (spread, the default), checks both against a float64
product, and times them with cuBLAS in interleaved rounds: tutorial 07's steps 4-6 (fp16 tensor
cores, 4096^3 and 8192^3), tutorial 05's step 7 (fp32, pipeline(3)) next to its step 6, and the
pipeline(4) fp32 states of benchmarks/logs/gemm_cuda_4096_pipelining_states.jsonl.

    python3 benchmarks/experiments/pipeline_spread.py [ROUNDS]          (default 5)

The spreading transform (InjectDoubleBuffer's spread_fetches, read from TESSEL_PIPELINE_SPREAD)
was measured slower and reverted: run this at commit 1b37c4d, where it exists (on later commits
the two builds of each kernel are the same). docs/perf/tensor-cores.md has the figures.
"""
import json
import os
import sys

import tessel as ts  # before torch: the process uses tessel's NVRTC
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
import cuda_bench  # noqa: E402

STATES = os.path.join(HERE, "..", "logs", "gemm_cuda_4096_pipelining_states.jsonl")


def build(make, spread):
    os.environ["TESSEL_PIPELINE_SPREAD"] = "1" if spread else "0"
    try:
        s, args = make()
        return ts.build(s, args, target="cuda")
    finally:
        del os.environ["TESSEL_PIPELINE_SPREAD"]


def fp16(rounds):
    tc = cuda_bench.tutorial("07_tensor_core_gemm")
    for n in (4096, 8192):
        g = torch.Generator(device="cuda").manual_seed(n)
        a = torch.randn(n, n, device="cuda", generator=g).half()
        b = torch.randn(n, n, device="cuda", generator=g).half()
        ref = a.double() @ b.double()
        timed = [("cublas", lambda: torch.mm(a, b, out_dtype=torch.float32))]
        makers = [("step4", lambda: tc.step4(n, n, n)), ("step5", lambda: tc.step5(n, n, n)),
                  ("step6", lambda: tc.step6(n, n, n)),
                  ("step6 group 16", lambda: tc.step2(n, n, n, bn=256, bk=64, pipeline=4,
                                                      swizzle=True, group=16))]
        for label, make in makers:
            for spread in (False, True):
                f = build(make, spread)
                out = torch.full((n, n), float("nan"), device="cuda")
                f(a, b, out)
                err = cuda_bench.relative_error(out, ref)
                assert err < 1e-4, f"{label} spread={spread} is wrong: {err}"
                name = f"{label} {'spread' if spread else 'after'}"
                timed.append((name, lambda f=f, out=out: f(a, b, out)))
        print(f"fp16 n={n}:")
        cuda_bench.interleaved_rounds(timed, rounds, 2.0 * n**3, "cublas", digits=1)


def fp32(rounds):
    n = 4096
    t5 = cuda_bench.tutorial("05_gpu_gemm")
    sms = ts.Target("cuda").sm_count
    kernels = [("tutorial step6", build(lambda: t5.step6(n, sm_count=sms), True))]
    for spread in (False, True):
        kernels.append((f"tutorial step7 {'spread' if spread else 'after'}",
                        build(lambda: t5.step7(n, sm_count=sms), spread)))
    task = ts.SearchTask("op.matmul", [n, n, n, 0, 0, "float32"], target="cuda")
    if os.path.exists(STATES):
        with open(STATES) as f:
            for line in f:
                state = json.loads(line)
                if not state["label"].endswith("pipe4"):  # the pipelined seeds' bests
                    continue
                for spread in (False, True):
                    make = lambda: (task.apply_record(json.dumps(state["schedule"])),
                                    list(task.dag.args))
                    kernels.append((f"{state['label']} {'spread' if spread else 'after'}",
                                    build(make, spread)))
    cuda_bench.interleaved_gemm_report(kernels, n, rounds)


if __name__ == "__main__":
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    fp16(rounds)
    fp32(rounds)
