"""Host time of calling a compiled kernel from Python (issue 22), against the reference library's
own call of a comparable operation, in one process:

  cpu_numpy     an 8-element add kernel called with numpy arrays vs. numpy.add(a, 1, out=b)
  cpu_ndarray   the same kernel called with tessel NDArrays
  cuda_torch    a 1024-element add kernel called with torch CUDA tensors (run on
                torch.cuda.current_stream()) vs. torch.add(a, 1, out=b): host time per call,
                launches queued without synchronising (GPU host only)

Each case checks the kernel's result first, then times `calls` calls per sample (perf_counter),
`samples` samples after a warm-up, and reports the median. The last lines are
  BENCH call_overhead <case> tessel=<calls/s> <reference>=<calls/s> ratio=<tessel/reference>
(ratio > 1: tessel's call is cheaper). Bars: <= 5 us per CPU call; on the GPU host a ratio >= 1.0
(tessel's host time at most PyTorch's).
Usage: benchmarks/run.sh call_overhead [--calls N] [--samples N]   (CPU; the GPU case too where
there is a GPU and torch) and benchmarks/run.sh call_overhead_cuda on the GPU host.
"""
import argparse
import statistics
import sys
import time

import numpy as np

import tessel as ts


def per_call_seconds(fn, calls, samples, after=None):
    for _ in range(max(calls // 10, 10)):
        fn()
    if after:
        after()
    times = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls)
        if after:
            after()  # not timed: the GPU catches up between samples
    return statistics.median(times)


def add_one_kernel(n, target):
    A = ts.placeholder((n,), name="A")
    B = ts.compute((n,), lambda i: A[i] + 1.0, name="B")
    s = ts.create_schedule(B)
    if target.startswith("cuda"):
        bx, tx = s[B].split(B.op.axis[0], factor=min(n, 256))
        s[B].bind(bx, "blockIdx.x")
        s[B].bind(tx, "threadIdx.x")
    return ts.build(s, [A, B], target=target)


def report(case, reference, t_tessel, t_ref):
    print(f"{case}: tessel {t_tessel * 1e6:.3f} us/call, {reference} {t_ref * 1e6:.3f} us/call")
    return (f"BENCH call_overhead {case} tessel={1 / t_tessel:.0f} {reference}={1 / t_ref:.0f} "
            f"ratio={t_ref / t_tessel:.3f}")


def cpu_cases(calls, samples):
    f = add_one_kernel(8, "llvm")["main"]
    a = np.arange(8, dtype="float32")
    b = np.zeros(8, "float32")
    f(a, b)
    np.testing.assert_array_equal(b, a + 1)
    lines = []
    t_ref = per_call_seconds(lambda: np.add(a, 1.0, out=b), calls, samples)
    t = per_call_seconds(lambda: f(a, b), calls, samples)
    lines.append(report("cpu_numpy", "numpy", t, t_ref))
    if t > 5e-6:
        print(f"cpu_numpy: {t * 1e6:.2f} us per call is over the 5 us bar", file=sys.stderr)
    na, nb = ts.nd.array(a.copy()), ts.nd.empty((8,), "float32")
    t = per_call_seconds(lambda: f(na, nb), calls, samples)
    lines.append(report("cpu_ndarray", "numpy", t, t_ref))
    return lines


def cuda_case(calls, samples):
    try:
        import torch
    except ImportError:
        print("cuda_torch: skipped (no torch)")
        return []
    if not (ts.cuda_available() and torch.cuda.is_available()):
        print("cuda_torch: skipped (no CUDA device)")
        return []
    n = 1024
    f = add_one_kernel(n, "cuda")["main"]
    a = torch.arange(n, dtype=torch.float32, device="cuda")
    b = torch.zeros(n, dtype=torch.float32, device="cuda")
    f(a, b)
    torch.cuda.synchronize()
    assert torch.equal(b, a + 1), "the tessel kernel computed a wrong result"
    # The launch goes to torch's current stream: on a side stream, ordered after torch's work.
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        a2 = a * 2
        f(a2, b)
    side.synchronize()
    assert torch.equal(b, a * 2 + 1), "the kernel did not run on torch's current stream"
    sync = torch.cuda.synchronize
    t_ref = per_call_seconds(lambda: torch.add(a, 1.0, out=b), calls, samples, after=sync)
    t = per_call_seconds(lambda: f(a, b), calls, samples, after=sync)
    line = report("cuda_torch", "torch", t, t_ref)
    if t > t_ref:
        print("cuda_torch: tessel's call costs more host time than torch's", file=sys.stderr)
    return [line]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--samples", type=int, default=25)
    p.add_argument("--gpu-only", action="store_true")
    args = p.parse_args()
    lines = []
    if not args.gpu_only and "llvm" in ts.targets():
        lines += cpu_cases(args.calls, args.samples)
    lines += cuda_case(min(args.calls, 500), args.samples)
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
