"""gemm_cuda_kept_a: an experiment for the GPU search's two basins (docs/perf/gpu-gemm-search.md):
tutorial 05's register-tile schedule with A's shared tile kept as it is ([i][k], so cp.async
copies it 16 bytes at a time) and A's register read cache loaded along k (4 columns of k per
128-bit load, attached one k split above the innermost k loop) instead of A's tile stored
transposed. If its pipelined variants reach step 6 (double buffered, transposed A), the GPU
sketch gets this read-cache placement as a choice. Times every variant, step 6 and step 7 (A
transposed, pipeline(3)) against cuBLAS in one process (support/cuda_bench.py: each kernel
checked against a float64 reference, then interleaved rounds of CUDA-event timings).

    python3 benchmarks/gemm_cuda_kept_a.py [ROUNDS]          # 5 by default; n = 4096
    python3 benchmarks/gemm_cuda_kept_a.py --check            # no GPU: interpreter + NVRTC only
"""
import os
import sys

import tessel as ts

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "support"))
import tutorial_loader  # noqa: E402 (torch-free: --check runs without it)

N = 4096
T5 = tutorial_loader.tutorial("05_gpu_gemm")


def kept_a(n, bk=8, vthreads=2, double_buffer=False, pipeline=3):
    """Tutorial 05's step 4 with kept_a (see the file comment), 128 x 128 tiles of 16 x 16 threads."""
    return T5.step4(n, bk=bk, vthreads=vthreads, double_buffer=double_buffer, pipeline=pipeline,
                    kept_a=True)


VARIANTS = [
    ("kept A, pipeline(3)", dict(pipeline=3)),
    ("kept A, pipeline(4)", dict(pipeline=4)),
    ("kept A, pipeline(3), bk 16", dict(pipeline=3, bk=16)),
    ("kept A, pipeline(3), no vthreads", dict(pipeline=3, vthreads=1)),
    ("kept A, double_buffer", dict(pipeline=0, double_buffer=True)),
]


def main():
    if "--check" in sys.argv:
        for label, kw in VARIANTS:
            T5.check_in_interpreter(lambda n: kept_a(n, **kw))
            s, args = kept_a(N, **kw)
            log = ts.build(s, args, target="cuda -arch=sm_90").get_source("nvrtc_log")
            regs = [line.strip() for line in log.splitlines() if "Used" in line or "spill" in line]
            print(f"{label}: correct in the interpreter; {' '.join(regs)}")
        return 0
    import cuda_bench  # torch: only where the kernels are timed

    sms = ts.Target("cuda").sm_count
    kernels = []
    for label, make in (("tutorial step6", T5.step6), ("tutorial step7", T5.step7)):
        s, args = make(N, sm_count=sms)
        kernels.append((label, ts.build(s, args, target="cuda")))
    for label, kw in VARIANTS:
        s, args = kept_a(N, **kw)
        kernels.append((label, ts.build(s, args, target="cuda")))
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    cuda_bench.interleaved_gemm_report(kernels, N, rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
