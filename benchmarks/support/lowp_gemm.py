"""gemm_lowp_cpu's perf section, its shared parts: the cases' inputs (drawn alike in every process
from the case's seed), the timing harness (the same in every process), and oneDNN's side, which
runs in a process of its own for each instruction set it is held to: oneDNN reads
ONEDNN_MAX_CPU_ISA once per process.

OneDnnWorker starts this file as a program (no arguments) with ONEDNN_MAX_CPU_ISA set or unset
and ONEDNN_VERBOSE=1, and talks to it in JSON lines: on stdin
  {"op": "prepare", "case": CASE, "out": PATH}  builds oneDNN's matmul for CASE, reorders the
      weights into its layout (once: never timed), runs it once with verbose output on (the lines
      go to stdout ahead of the reply), turns verbose off and writes that result to PATH (raw
      bytes, ndarray.tofile);
  {"op": "sample"}  one timed sample of the prepared matmul (take_sample);
and on stdout a reply per message, one line "@@ " + JSON ({"impl", "calls"} / {"seconds"}, or
{"error"}); any other stdout line is oneDNN's verbose output. It exits at the end of stdin.
CASE is a dict: m, n, k, dtypes "a", "b", "out" (numpy's names), transpose_b (B as [n][k]), seed.
"""
import json
import math
import os
import subprocess
import sys
import time

import ml_dtypes
import numpy as np

# A sample: untimed calls for WARM_SECONDS (the other contender's threads, which spin a while after
# its calls, have stopped by then; the caches hold this contender's data), then as many calls as
# last SAMPLE_SECONDS, timed together: the sample is their mean.
SAMPLE_SECONDS = 0.02
WARM_SECONDS = 0.01

NUMPY_DTYPES = {"uint8": np.uint8, "int8": np.int8, "int32": np.int32, "float32": np.float32,
                "bfloat16": ml_dtypes.bfloat16}


def calls_per_sample(fn, sample_seconds=SAMPLE_SECONDS):
    """Calls that make a sample last sample_seconds, from the fastest of 3 (after 2 warm-up
    calls)."""
    for _ in range(2):
        fn()
    fastest = math.inf
    for _ in range(3):
        t = time.perf_counter()
        fn()
        fastest = min(fastest, time.perf_counter() - t)
    return max(1, math.ceil(sample_seconds / fastest))


def take_sample(fn, calls, warm_seconds=WARM_SECONDS):
    """The mean seconds of `calls` calls of fn, after warm_seconds of untimed ones."""
    t = time.perf_counter()
    while time.perf_counter() - t < warm_seconds:
        fn()
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t) / calls


def page_aligned(x):
    """A copy of x starting on a page, as tessel's arrays do (numpy's large arrays start 16 bytes
    into one): neither library pays for split cache lines."""
    buf = np.empty(x.nbytes + 4096, np.uint8)
    start = -buf.ctypes.data % 4096
    y = buf[start:start + x.nbytes].view(x.dtype).reshape(x.shape)
    y[...] = x
    return y


def draw_inputs(case):
    """A (m x k) and B (k x n, or n x k when transpose_b), random and never zero: uint8 from
    [1, 255], int8 from [-128, 127] without 0, bfloat16 from N(0, 1) rounded (a zero made 1)."""
    rng = np.random.default_rng(case["seed"])
    shapes = [(case["m"], case["k"]),
              (case["n"], case["k"]) if case["transpose_b"] else (case["k"], case["n"])]
    out = []
    for dtype, shape in zip((case["a"], case["b"]), shapes):
        if dtype == "uint8":
            v = rng.integers(1, 256, shape).astype(np.uint8)
        elif dtype == "int8":
            v = rng.integers(-128, 128, shape).astype(np.int8)
            v[v == 0] = 1
        elif dtype == "bfloat16":
            v = rng.standard_normal(shape, dtype=np.float32).astype(ml_dtypes.bfloat16)
            v[v == 0] = 1
        else:
            raise ValueError(f"no inputs of dtype {dtype}")
        out.append(v)
    return out


def empty_result(case):
    """The output array, filled with a value no correct product of these inputs gives everywhere
    (NaN for floats): an element a kernel never writes fails the check."""
    dtype = NUMPY_DTYPES[case["out"]]
    fill = np.nan if case["out"] in ("float32", "bfloat16") else np.iinfo(np.int32).min
    return page_aligned(np.full((case["m"], case["n"]), fill, dtype))


def onednn_missing():
    """None where oneDNN's helper library (support/onednn_matmul.cpp, built by benchmarks/run.sh)
    is at TESSEL_BENCH_ONEDNN, else why not. Not loaded here: only the workers load oneDNN."""
    path = os.environ.get("TESSEL_BENCH_ONEDNN", "")
    if path and os.path.exists(path):
        return None
    return (f"oneDNN's helper library is not built (TESSEL_BENCH_ONEDNN={path!r}; "
            "benchmarks/run.sh builds it where libdnnl-dev is installed)")


# libgomp's spin before a waiting thread sleeps, in pause instructions, unless the environment
# sets OMP_WAIT_POLICY or GOMP_SPINCOUNT: about tessel's TESSEL_SPIN_US (200 us) on the CPU of
# issue 55's figures (a pause took 9.7 ns there; ~45 ns on Skylake-SP and Ice Lake servers).
# libgomp's default, 300,000, is 2.9 ms there: beside other processes a thread spinning at a
# barrier holds a core its partner waits for, and oneDNN's 2-thread 128x768x768 int8 product took
# 6-8 ms a call beside a 2-job compile instead of 0.2 ms. OMP_WAIT_POLICY=passive (sleep at once)
# cost it 35 % at that shape on an idle machine (waking its thread each call); 20,000 cost nothing.
GOMP_SPINCOUNT = "20000"


def omp_environment():
    """oneDNN's OpenMP wait settings in the workers: the environment's where it has any, else a
    spin of GOMP_SPINCOUNT pauses."""
    if "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ:
        return {k: os.environ[k] for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
                if k in os.environ}
    return {"GOMP_SPINCOUNT": GOMP_SPINCOUNT}


class OneDnnWorker:
    """oneDNN's matmul in a process of its own, held to the instruction set `isa`
    (ONEDNN_MAX_CPU_ISA; None: unrestricted), on `threads` OpenMP threads (omp_environment()).
    `info` holds its verbose header lines (oneDNN's version, threads, the ISA it runs),
    `verbose` the verbose lines of the last prepare()."""

    def __init__(self, isa, threads):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), ONEDNN_VERBOSE="1",
                   **omp_environment())
        for name in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"):
            env.pop(name, None)
        if isa:
            env["ONEDNN_MAX_CPU_ISA"] = isa
        self.isa, self.info, self.verbose = isa, [], []
        self._proc = subprocess.Popen([sys.executable, os.path.abspath(__file__)], env=env,
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def _ask(self, message):
        """Sends one message; the reply, with the verbose lines before it in self.verbose."""
        self._proc.stdin.write(json.dumps(message) + "\n")
        self._proc.stdin.flush()
        self.verbose = []
        for line in self._proc.stdout:
            if line.startswith("@@ "):
                reply = json.loads(line[3:])
                if "error" in reply:
                    raise RuntimeError(reply["error"])
                return reply
            (self.info if line.startswith("onednn_verbose,info") else self.verbose).append(
                line.rstrip("\n"))
        raise RuntimeError(f"the oneDNN worker ({self.isa or 'unrestricted'}) exited with "
                           f"status {self._proc.wait()}")

    def prepare(self, case, out_path):
        """Builds the case's matmul and runs it once: the implementation's name as oneDNN reports
        it (impl_info_str); that call's verbose lines are in self.verbose."""
        return self._ask({"op": "prepare", "case": case, "out": out_path})["impl"]

    def sample(self):
        return self._ask({"op": "sample"})["seconds"]

    def isa_line(self):
        """oneDNN's verbose line naming the instruction set it runs, or ''."""
        return next((x.split(",isa:", 1)[1] for x in self.info if ",isa:" in x), "")

    def close(self):
        try:
            self._proc.stdin.close()
        except OSError:  # it exited already
            pass
        self._proc.wait()


def verbose_impl(lines):
    """The implementation in the matmul's verbose exec line
    (onednn_verbose,exec,cpu,matmul,<impl>,...), or None."""
    for line in lines:
        fields = line.split(",")
        if fields[1:4] == ["exec", "cpu", "matmul"]:
            return fields[4]
    return None


class Prepared:
    """The worker's side: one case's oneDNN matmul on its inputs, the weights reordered."""

    def __init__(self, case, out_path):
        import onednn_sgemm
        self.a, b = (page_aligned(x) for x in draw_inputs(case))
        self.c = empty_result(case)
        self.mm = onednn_sgemm.PackedMatmul(case["m"], case["n"], case["k"], case["a"],
                                            case["b"], case["out"], case["transpose_b"])
        onednn_sgemm.set_verbose(1)
        self.mm.set_weights(b)
        self.mm(self.a, self.c)
        onednn_sgemm.set_verbose(0)  # flushes the verbose lines: they come before the reply
        self.c.tofile(out_path)
        self.calls = calls_per_sample(self.run)

    def run(self):
        self.mm(self.a, self.c)


def worker_main():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    prepared = None
    for line in sys.stdin:
        message = json.loads(line)
        try:
            if message["op"] == "prepare":
                prepared = None  # the previous case's buffers go first
                prepared = Prepared(message["case"], message["out"])
                reply = {"impl": prepared.mm.impl, "calls": prepared.calls}
            else:
                reply = {"seconds": take_sample(prepared.run, prepared.calls)}
        except Exception as e:  # told to the parent, which reports it in its table
            reply = {"error": f"{type(e).__name__}: {e}"}
        sys.stdout.write("@@ " + json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    worker_main()
