"""Re-times tuned GEMM kernels and the common references in one process, with one harness.

    python gemm_retime.py SPEC.json OUT.json

SPEC: {"n": 1024, "samples": 30, "sample_seconds": 0.05, "kernels": [{"label": ...,
"tuner": "metaschedule" | "tessel", "source": <MetaSchedule work dir | tessel log>,
"trials": <use the best of the first this many records>}, ...]}. The references are oneDNN's
dnnl_sgemm (libdnnl.so through ctypes) and NumPy's matmul. Every kernel first runs once on
random inputs (never zero) with its output filled with NaN, and is checked against a float64
product (|error| <= n * eps32 * (|A| @ |B|), the rounding bound of a float32 dot product); then
all are timed interleaved (one sample of each per round, in a new random order every round):
a sample runs the kernel back to back for at least `sample_seconds` and counts the mean time of
a call; the figure is the median sample. Everything runs on 2 threads (the environment is set by
the benchmark; the defaults below are for running it by hand).
"""
import json
import math
import os
import random
import statistics
import sys
import time

for name, value in {"TVM_NUM_THREADS": "2", "TESSEL_NUM_THREADS": "2", "OMP_NUM_THREADS": "2",
                    "OPENBLAS_NUM_THREADS": "2", "OMP_WAIT_POLICY": "passive",
                    "OPENBLAS_THREAD_TIMEOUT": "4"}.items():
    os.environ.setdefault(name, value)

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onednn_sgemm as onednn  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def page_aligned(x):
    """A copy of x starting on a page, as the tuners' arrays do (numpy's own large arrays start
    16 bytes into one): no contender pays for split cache lines."""
    buf = np.empty(x.nbytes + 4096, np.uint8)
    start = -buf.ctypes.data % 4096
    y = buf[start:start + x.nbytes].view(x.dtype).reshape(x.shape)
    y[...] = x
    return y


def onednn_sgemm(n, a, b, c):
    """C = A @ B (row-major) by dnnl_sgemm (onednn_sgemm.py); libdnnl-dev
    (scripts/install-deps.sh --bench)."""
    if onednn.load(os.cpu_count()) is None:
        raise RuntimeError("libdnnl (oneDNN) is not installed")
    assert a.shape == b.shape == c.shape == (n, n)
    return (lambda: onednn.sgemm(a, b, c)), lambda: c


def numpy_matmul(a, b, c):
    return lambda: np.matmul(a, b, out=c), lambda: c


def metaschedule_kernel(k, n, a, b):
    import tvm
    import metaschedule_gemm
    func, index, seconds = metaschedule_gemm.build_best(k["source"], n, k["trials"])
    ta, tb = tvm.runtime.tensor(a), tvm.runtime.tensor(b)
    tc = tvm.runtime.tensor(np.full((n, n), np.nan, np.float32))
    return (lambda: func(ta, tb, tc)), tc.numpy, index, seconds


def tessel_kernel(k, n, a, b):
    import tessel as ts
    import tessel_gemm
    func, index, seconds = tessel_gemm.build_best(k["source"], n, k["trials"])
    # Copies, as tvm.runtime.tensor makes: wrapped in place, numpy's large arrays start 16 bytes
    # into a page, and every 64-byte vector load of a row splits two cache lines (a tuned best
    # ran at 186 GFLOP/s on numpy's memory and 390 on a copy).
    ta, tb = ts.nd.array(a, copy=True), ts.nd.array(b, copy=True)
    tc = ts.nd.array(np.full((n, n), np.nan, np.float32), copy=True)
    return (lambda: func(ta, tb, tc)), tc.numpy, index, seconds


def check(label, c, ref, bound):
    err = np.abs(c.astype(np.float64) - ref)
    bad = ~(err <= bound)  # NaN (an output never written) fails too
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise RuntimeError(f"{label}: {int(bad.sum())} wrong elements, e.g. C[{i},{j}] = "
                           f"{c[i, j]} instead of {ref[i, j]} (bound {bound[i, j]:.3g})")
    return float((err / np.maximum(bound, 1e-30)).max())


def calibrate(run, sample_seconds):
    """Calls per sample: enough that a sample lasts sample_seconds, from the fastest of 3 calls
    (after 2 warm-up calls), with 10 % to spare."""
    for _ in range(2):
        run()
    fastest = math.inf
    for _ in range(3):
        t = time.perf_counter()
        run()
        fastest = min(fastest, time.perf_counter() - t)
    return max(1, math.ceil(1.1 * sample_seconds / fastest))


SETTLE_SECONDS = 0.02


def time_interleaved(contenders, samples, sample_seconds):
    reps = {label: calibrate(run, sample_seconds) for label, run in contenders}
    times = {label: [] for label, _ in contenders}
    rng = random.Random(1)
    for _ in range(samples):
        order = list(contenders)
        rng.shuffle(order)  # no kernel always runs after the same one (idle threads, caches)
        for label, run in order:
            # Let the previous contender's threads go to sleep first: TVM's pool spins for a
            # while after a call, and at real-time priority a spinning thread keeps its core
            # from the next contender's threads (oneDNN's then ran on one core: bimodal samples).
            time.sleep(SETTLE_SECONDS)
            t = time.perf_counter()
            for _ in range(reps[label]):
                run()
            elapsed = time.perf_counter() - t
            if elapsed < sample_seconds:
                reps[label] = max(reps[label] + 1, math.ceil(1.1 * reps[label] * sample_seconds /
                                                             elapsed))
            times[label].append(elapsed / reps[label])
    return times, reps


def main():
    spec = json.load(open(sys.argv[1]))
    n, samples = spec["n"], spec.get("samples", 30)
    sample_seconds = spec.get("sample_seconds", 0.05)
    rng = np.random.default_rng(spec.get("seed", 7))
    a = rng.uniform(-1.0, 1.0, (n, n)).astype(np.float32)
    b = rng.uniform(-1.0, 1.0, (n, n)).astype(np.float32)
    a[a == 0] = 1.0
    b[b == 0] = 1.0
    ref = a.astype(np.float64) @ b.astype(np.float64)
    bound = n * float(np.finfo(np.float32).eps) * (np.abs(a).astype(np.float64) @
                                                   np.abs(b).astype(np.float64))
    out = {"n": n, "samples": samples, "sample_seconds": sample_seconds, "kernels": {},
           "errors": {}}
    contenders = []
    made = {}  # (tuner, source, record index) -> label: one kernel timed once
    builders = {"metaschedule": metaschedule_kernel, "tessel": tessel_kernel}
    nan = np.full((n, n), np.nan, np.float32)
    refs = [("onednn", onednn_sgemm(n, page_aligned(a), page_aligned(b), page_aligned(nan))),
            ("numpy", numpy_matmul(page_aligned(a), page_aligned(b), page_aligned(nan)))]
    for label, (run, result) in refs:
        run()
        out["kernels"][label] = {"check": check(label, result(), ref, bound)}
        contenders.append((label, run))
    for k in spec["kernels"]:
        try:
            run, result, index, seconds = builders[k["tuner"]](k, n, a, b)
        except Exception as e:  # one kernel that cannot be built costs its figure, not the run
            out["errors"][k["label"]] = f"{type(e).__name__}: {e}"
            print(f"re-timing: {k['label']}: not built: {e}", flush=True)
            continue
        key = (k["tuner"], k["source"], index)
        entry = {"record": index, "seconds_while_tuning": seconds}
        if key in made:
            out["kernels"][k["label"]] = dict(entry, same_as=made[key])
            continue
        run()
        entry["check"] = check(k["label"], result(), ref, bound)
        out["kernels"][k["label"]] = entry
        made[key] = k["label"]
        contenders.append((k["label"], run))
    print(f"re-timing {len(contenders)} kernels: {samples} interleaved samples of >= "
          f"{sample_seconds * 1e3:.0f} ms each, on {os.environ['TESSEL_NUM_THREADS']} threads",
          flush=True)
    times, reps = time_interleaved(contenders, samples, sample_seconds)
    flop = 2.0 * n ** 3
    for label, ts_ in times.items():
        q = statistics.quantiles(ts_, n=4)
        out["kernels"][label].update(
            gflops=flop / statistics.median(ts_) / 1e9, calls_per_sample=reps[label],
            gflops_iqr=[flop / q[2] / 1e9, flop / q[0] / 1e9], samples=len(ts_))
    for label, entry in out["kernels"].items():
        if "same_as" in entry:
            entry["gflops"] = out["kernels"][entry["same_as"]]["gflops"]
    with open(sys.argv[2], "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
