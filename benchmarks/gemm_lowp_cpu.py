"""Low precision on the CPU (issue 55): float16 and bfloat16 operators that accumulate wide.

Numerics (`--numerics-only` runs this section alone). For float16 and bfloat16, inputs from
N(0, 1) and from U[0, 1), and three operators with a reduction of length K = 4096 (`--k`):
matmul (M = N = 256, `--mn`), softmax over rows of length K and layer norm (gamma, beta,
eps 1e-5) over rows of length K (256 rows, `--rows`):
  - the inputs are drawn in float32 and rounded to the 16-bit dtype (numpy's float16,
    ml_dtypes' bfloat16); these same rounded values feed every computation below;
  - reference: NumPy in float64;
  - tessel: `ts.op.<op>` on 16-bit placeholders, the default schedule for "llvm", result in the
    16-bit dtype (the operator's default out_dtype; float32 accumulation inside);
  - float32 accumulation: NumPy in float32 (OpenBLAS's sgemm, float32 exp and pairwise sums),
    the result rounded to the 16-bit dtype: "the same computation with float32 accumulation";
  - 16-bit accumulation (matmul only, to show what the wide accumulator buys): a hand-written
    `ts.compute` whose `ts.sum` accumulates in the 16-bit dtype, same schedule rules;
  - PyTorch's operator on the 16-bit tensors, where torch is importable (the GPU host).
Each error is the relative L2 error ||y - ref||_2 / ||ref||_2 in float64. Prints one table (with
the share of outputs whose 16-bit value differs from the float32 computation's); then, for
matmul, the float32 accumulator's error before the rounding to 16 bits (out_dtype="float32")
beside NumPy's float32 matmul and a sequential float32 sum along K (no bar: information on the
order of the sums, which the 16-bit rounding hides); then
  BENCH gemm_lowp_cpu numerics_<op>_<dtype>_<dist> tessel=<err> f32acc=<err> ratio=<x>
Bar (issue 55): tessel's error <= 1.1 x the float32-accumulation error in every row; the program
exits with status 1 after printing everything if a row misses it or a tessel kernel fails.

Perf (`--perf-only` runs this section alone): int8 (uint8 x int8 -> int32) and bfloat16 (float32
accumulation) GEMM, tessel's default schedule for "llvm" (the shipped tuning logs off: the rules,
whose tiles run on vpdpbusd / vdpbf16ps) against oneDNN's matmul primitive
(support/onednn_matmul.cpp through ctypes), its weights reordered once into the layout it prefers
(format_tag::any) outside the timing. oneDNN runs in processes of its own (support/lowp_gemm.py),
since it reads ONEDNN_MAX_CPU_ISA once per process: one held to the instructions tessel's tiles
use (AVX512_CORE_VNNI for int8, AVX512_CORE_BF16 for bfloat16) and one unrestricted (AMX where
the CPU has it); the kernel each ran is read from its ONEDNN_VERBOSE=1 line of one untimed call.
Both libraries on TESSEL_NUM_THREADS threads (default 2; oneDNN's OMP_NUM_THREADS follows, its
threads spinning about as long as tessel's before they sleep: lowp_gemm.GOMP_SPINCOUNT).
Cases: matmul n^3 (`--perf-n`, 1024) int8, s8s8 (int8 x int8), bfloat16 -> float32
(out_dtype="float32", oneDNN's f32 dst) and bfloat16 -> bfloat16 (the default out_dtype);
BERT-base's int8 dense layers at sequence 128 (x (M, K) times w (N, K)^T: 128x768x768,
128x3072x768, 128x768x3072 as MxNxK,
oneDNN given the weights transposed), and the same products as matmul (w as (K, N)): tessel
packs the weights in each call, from the transposed layout at a higher cost. Inputs random and
never zero; tessel's result is checked
against NumPy's float64 product (int8 exactly; bfloat16 within K float32 roundings of |A| @ |B|,
plus the rounding to bfloat16) and against each oneDNN's before any timing. Timing: the
contenders interleaved, one sample each a round in a rotating order (oneDNN's samples taken by its
process on request), a sample being 10 ms of untimed calls and then 20 ms of calls timed, the
median of `--rounds` (15) rounds after 2. Prints a table (tessel ms and GOP/s; per oneDNN its ms,
kernel and ratio = tessel's speed / oneDNN's), the verbose lines, the count of dot-product
instructions in tessel's code, and
  BENCH gemm_lowp_cpu perf_<case> tessel=<GOP/s> onednn_<isa|all>=<GOP/s> ratio=<x>
Bar (issue 55): ratio >= 0.8 against oneDNN held to the same instructions for int8 n^3 and
bfloat16 -> float32 n^3 (the other rows are information); a case is skipped, with the reason,
where the CPU lacks the feature. `--tuned-log PATH` also times, as "<case> tuned", the log's best
record for each case's computation (ts.apply_history_best; a case without one says so);
`--tune TRIALS` (issue 55's figure: 256) first tunes the int8 n^3 matmul for TRIALS trials
(ts.auto_schedule.tune of its DAG for "llvm", 64 measurements a round, the default schedule
measured first; the tuner's search has the dot-product sketch, multi_level_tiling_cpu_dot) into
`--tune-log PATH` (default: a temporary file) and times that log's best the same way, printing
its speed against the default's ("tuned / default"); without either the tuned figure is not
measured. int8 x int8 -> int32 ("s8s8", PyTorch's _int_mm) is built with target="llvm": on a CPU
with VNNI tessel computes it as the +128-shifted uint8 x int8 product minus 128 times B's column
sums (op/Matmul.h), oneDNN as its s8 x s8 matmul. The load averages before and after are printed:
beside other processes, each library's threads get less than their cores, and how much each
loses to a preempted thread differs (2-thread figures drift towards 1-thread ones).
Usage: benchmarks/run.sh gemm_lowp_cpu [--numerics-only | --perf-only] [--mn N] [--rows N]
       [--k K] [--perf-n N] [--rounds N] [--tuned-log PATH | --tune TRIALS [--tune-log PATH]
       [--tune-seed S]]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings

# tessel's threads, read when its pool starts; oneDNN's workers get as many (perf section).
os.environ.setdefault("TESSEL_NUM_THREADS", "2")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import tessel as ts  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import lowp_gemm  # noqa: E402

BAR = 1.1  # tessel's error / the float32-accumulation error, at most (issue 55)
EPS = 1e-5  # layer norm's epsilon, tessel's default

DTYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}

# Inputs drawn in float32, as a user's data would be before it is rounded to 16 bits.
DISTRIBUTIONS = {
    "N(0,1)": lambda rng, shape: rng.standard_normal(shape, dtype=np.float32),
    "U[0,1)": lambda rng, shape: rng.random(shape, dtype=np.float32),
}


def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_layer_norm(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    d = x - mean
    var = (d * d).mean(axis=-1, keepdims=True)
    return d / np.sqrt(var + x.dtype.type(EPS)) * gamma + beta


def matmul_16bit_acc(a, b):
    """C = A B summed in the operands' own 16-bit dtype (ts.sum without dtype=)."""
    k = ts.reduce_axis((0, int(a.shape[1])), name="k")
    return ts.compute((a.shape[0], b.shape[1]), lambda i, j: ts.sum(a[i, k] * b[k, j], axis=k),
                      name="matmul_16bit_acc")


def torch_fn(name):
    """PyTorch's version of an operator on torch tensors, as a user calls it."""
    import torch
    import torch.nn.functional as F
    return {
        "matmul": torch.matmul,
        "softmax": lambda x: torch.softmax(x, dim=-1),
        "layer_norm": lambda x, g, b: F.layer_norm(x, (x.shape[-1],), g, b, eps=EPS),
    }[name]


class NumericsOp:
    """One operator of the numerics section: its input shapes, tessel's operator on
    placeholders, NumPy's (computing in its arguments' dtype), and optionally a tessel
    computation that accumulates in the 16-bit dtype."""

    def __init__(self, name, size, shapes, tessel_fn, numpy_fn, narrow_acc_fn=None):
        self.name, self.size, self.shapes = name, size, shapes
        self.tessel_fn, self.numpy_fn, self.narrow_acc_fn = tessel_fn, numpy_fn, narrow_acc_fn


OP_SEEDS = {"matmul": 0, "softmax": 1, "layer_norm": 2}


def numerics_ops(mn, rows, k):
    return [
        NumericsOp("matmul", f"{mn}x{mn}x{k}", [(mn, k), (k, mn)], ts.op.matmul, np.matmul,
                   matmul_16bit_acc),
        NumericsOp("softmax", f"{rows}x{k}", [(rows, k)],
                   lambda x: ts.op.softmax(x, axis=-1), np_softmax),
        NumericsOp("layer_norm", f"{rows}x{k}", [(rows, k), (k,), (k,)],
                   lambda x, g, b: ts.op.layer_norm(x, g, b, eps=EPS), np_layer_norm),
    ]


def rel_l2(y, ref):
    y, ref = np.asarray(y, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    return float(np.linalg.norm((y - ref).ravel()) / np.linalg.norm(ref.ravel()))


class Kernels:
    """tessel's kernels, built once per (computation, dtype) for `target` with the default
    schedule, run on arrays on `device` (None: the host). The same code serves "cuda" with
    device=ts.cuda(0): inputs are copied there and the result back."""

    def __init__(self, target, device=None):
        self.target, self.device, self.built = target, device, {}

    def run(self, key, fn, dtype, values):
        if key not in self.built:
            try:
                phs = [ts.placeholder(v.shape, dtype=dtype, name=f"in{i}")
                       for i, v in enumerate(values)]
                out = fn(*phs)
                s = ts.op.default_schedule(out, self.target)
                f = ts.build(s, phs + [out], target=self.target)["main"]
                self.built[key] = (f, tuple(int(d) for d in out.shape), out.dtype)
            except Exception as e:  # kept: the next distribution fails the same way
                self.built[key] = e
        if isinstance(self.built[key], Exception):
            raise self.built[key]
        f, shape, out_dtype = self.built[key]
        args = [ts.nd.array(v, device=self.device) for v in values]
        result = ts.nd.empty(shape, out_dtype, self.device)
        f(*args, result)
        return result.numpy()  # waits for the kernel on a GPU


def torch_error(op, dtype, values, ref, device):
    """PyTorch's relative error on the same 16-bit values, or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    tdtype = {"float16": torch.float16, "bfloat16": torch.bfloat16}[dtype]
    # float32 -> the 16-bit dtype is exact here: the values are 16-bit values already.
    args = [torch.from_numpy(v.astype(np.float32)).to(device=device, dtype=tdtype) for v in values]
    with torch.no_grad():
        y = torch_fn(op.name)(*args)
    return rel_l2(y.float().cpu().numpy(), ref)


def draw_inputs(op, dtype, dist):
    """The operator's inputs, drawn in float32 and rounded to `dtype` (to nearest even). The
    seed depends on the operator and the distribution, not on the dtype: both dtypes round the
    same float32 draws."""
    seed = 5500 + 10 * list(DISTRIBUTIONS).index(dist) + OP_SEEDS[op.name]
    rng = np.random.default_rng(seed)
    return [DISTRIBUTIONS[dist](rng, shape).astype(DTYPES[dtype]) for shape in op.shapes]


def numerics_row(op, dtype, dist, kernels, torch_device):
    """The errors of one (operator, dtype, distribution) case, as a dict."""
    np_dtype = DTYPES[dtype]
    values = draw_inputs(op, dtype, dist)
    ref = op.numpy_fn(*[v.astype(np.float64) for v in values])
    f32 = op.numpy_fn(*[v.astype(np.float32) for v in values]).astype(np_dtype)
    row = {"op": op.name, "size": op.size, "dtype": dtype, "dist": dist,
           "f32acc": rel_l2(f32, ref), "differs": None, "narrow": None, "torch": None,
           "error": None}
    try:
        got = kernels.run((op.name, dtype), op.tessel_fn, dtype, values)
        if got.dtype != np_dtype:
            raise TypeError(f"the result is {got.dtype}, not {dtype}")
        row["tessel"] = rel_l2(got, ref)
        # The share of outputs whose 16-bit value differs from the float32 computation's: both
        # round the same float32-accurate value, so their errors agree to a few digits.
        row["differs"] = float(np.mean(got.astype(np.float32) != f32.astype(np.float32)))
    except Exception as e:  # reported in the table: the other rows still run
        row["tessel"], row["error"] = float("nan"), f"{type(e).__name__}: {e}"
    if op.narrow_acc_fn is not None:
        try:
            narrow = kernels.run((op.name + ".16bit_acc", dtype), op.narrow_acc_fn, dtype, values)
            row["narrow"] = rel_l2(narrow, ref)
        except Exception as e:
            row["narrow"] = f"{type(e).__name__}"
    try:
        row["torch"] = torch_error(op, dtype, values, ref, torch_device)
    except Exception as e:  # an operator torch lacks for this dtype on this device
        row["torch"] = f"{type(e).__name__}"
    f32acc = row["f32acc"]
    row["ratio"] = row["tessel"] / f32acc if f32acc > 0 else (1.0 if row["tessel"] == 0 else
                                                              float("inf"))
    row["pass"] = row["error"] is None and row["ratio"] <= BAR
    return row


def numerics(mn, rows, k, target="llvm", device=None, torch_device="cpu"):
    """Every row of the numerics table, for `target` with arrays on `device`."""
    kernels = Kernels(target, device)
    return [numerics_row(op, dtype, dist, kernels, torch_device)
            for dtype in DTYPES for dist in DISTRIBUTIONS for op in numerics_ops(mn, rows, k)]


def accumulator_rows(mn, k, target="llvm", device=None):
    """matmul with out_dtype="float32": the float32 accumulator itself, before the rounding to 16
    bits that dominates the errors of the main table. tessel against NumPy's float32 matmul
    (OpenBLAS's sgemm, which blocks K) and a plain sequential float32 sum along K (a product of
    two 16-bit values is exact in float32: only the order of the additions differs). Information,
    not under the bar: the bar is on the 16-bit results."""
    kernels = Kernels(target, device)
    op = numerics_ops(mn, 1, k)[0]
    out = []
    for dtype in DTYPES:
        for dist in DISTRIBUTIONS:
            a, b = draw_inputs(op, dtype, dist)
            a32, b32 = a.astype(np.float32), b.astype(np.float32)
            ref = a.astype(np.float64) @ b.astype(np.float64)
            sequential = np.zeros(ref.shape, np.float32)
            for i in range(k):
                sequential += a32[:, i:i + 1] * b32[i:i + 1, :]
            try:
                got = rel_l2(kernels.run(("matmul.f32", dtype),
                                         lambda x, y: ts.op.matmul(x, y, out_dtype="float32"),
                                         dtype, [a, b]), ref)
            except Exception as e:
                got = f"{type(e).__name__}"
            out.append({"dtype": dtype, "dist": dist, "tessel": got,
                         "numpy": rel_l2(a32 @ b32, ref), "sequential": rel_l2(sequential, ref)})
    return out


def fmt_err(v):
    if v is None:
        return "-"
    return v if isinstance(v, str) else f"{v:.3e}"


def print_numerics(rows):
    print(f"{'op':<11} {'size':<13} {'dtype':<9} {'inputs':<7} {'tessel':>10} {'f32 acc':>10} "
          f"{'ratio':>6} {'bar':<5} {'differ':>7} {'16-bit acc':>10} {'torch':>10}")
    for r in rows:
        differs = "-" if r["differs"] is None else f"{100 * r['differs']:6.2f}%"
        print(f"{r['op']:<11} {r['size']:<13} {r['dtype']:<9} {r['dist']:<7} "
              f"{fmt_err(r['tessel']):>10} {fmt_err(r['f32acc']):>10} {r['ratio']:6.3f} "
              f"{'PASS' if r['pass'] else 'FAIL':<5} {differs:>7} {fmt_err(r['narrow']):>10} "
              f"{fmt_err(r['torch']):>10}")
    shown = set()
    for r in rows:
        if r["error"]:  # the first line for each; a message in full once
            first = r["error"].splitlines()[0]
            print(f"{r['op']} {r['dtype']} {r['dist']}: tessel failed: "
                  f"{first if r['error'] in shown else r['error']}")
            shown.add(r["error"])


def print_accumulators(rows):
    print("\nmatmul's float32 accumulator before the rounding to 16 bits (out_dtype=\"float32\"; "
          "no bar): relative L2 error against float64")
    print(f"{'dtype':<9} {'inputs':<7} {'tessel':>10} {'numpy f32':>10} {'sequential':>10} "
          f"{'tessel / numpy':>14}")
    for r in rows:
        ratio = (f"{r['tessel'] / r['numpy']:14.2f}" if not isinstance(r["tessel"], str)
                 else f"{'-':>14}")
        print(f"{r['dtype']:<9} {r['dist']:<7} {fmt_err(r['tessel']):>10} "
              f"{fmt_err(r['numpy']):>10} {fmt_err(r['sequential']):>10} {ratio}")


def print_bench_lines(rows, bench_name):
    for r in rows:
        dist = r["dist"].replace("(0,1)", "01").replace("[0,1)", "01")
        print(f"BENCH {bench_name} numerics_{r['op']}_{r['dtype']}_{dist} "
              f"tessel={r['tessel']:.4e} f32acc={r['f32acc']:.4e} ratio={r['ratio']:.4f}")


def numerics_section(args):
    print(f"numerics: relative L2 error against float64 (NumPy) on the same 16-bit inputs; "
          f"bar: tessel <= {BAR} x float32 accumulation (NumPy in float32, rounded to 16 bits)")
    print(f"CPU: {ts.Target('llvm')!r}")
    try:
        import torch
        print(f"torch {torch.__version__}: its operators on the same 16-bit tensors, on the CPU")
    except ImportError:
        print("torch: not installed (its column is '-')")
    print("differ: outputs whose 16-bit value differs from the float32 computation's; 16-bit "
          "acc: matmul summed in the 16-bit dtype (ts.sum)\n")
    rows = numerics(args.mn, args.rows, args.k)
    print_numerics(rows)
    print_accumulators(accumulator_rows(args.mn, args.k))
    print_bench_lines(rows, "gemm_lowp_cpu")
    sys.stdout.flush()
    failed = [r for r in rows if not r["pass"]]
    for r in failed:
        why = ("tessel failed: " + r["error"].splitlines()[0] if r["error"] else
               f"tessel's error is {r['ratio']:.3f} x the float32-accumulation error "
               f"{fmt_err(r['f32acc'])} (bar {BAR})")
        print(f"FAIL {r['op']} {r['dtype']} {r['dist']}: {why}", file=sys.stderr)
    return not failed


# ---- Perf (issue 55): int8 and bfloat16 GEMM against oneDNN's matmul primitive ----

PERF_BAR = 0.8  # tessel's speed / oneDNN's held to the same instructions, at least (issue 55)
TARGET = "llvm"  # this machine's CPU (docs/target.md): the default schedules' and the tuning's
UNRESTRICTED = None  # the worker key of oneDNN without ONEDNN_MAX_CPU_ISA


class PerfCase:
    """One product of the perf table: its lowp_gemm case (shape, dtypes, seed), the instruction
    tessel's tiles run on, the CPU feature that has it (LLVM's name) and the instruction set
    oneDNN is then held to, and whether issue 55's bar applies (the other rows are information)."""

    def __init__(self, op, m, n, k, a, out, insn, feature, isa, barred, seed=5501):
        b = "int8" if a in ("uint8", "int8") else a
        self.case = {"m": m, "n": n, "k": k, "a": a, "b": b, "out": out,
                     "transpose_b": op == "dense", "seed": seed}
        self.insn, self.feature, self.isa, self.barred = insn, feature, isa, barred
        kind = {"uint8": "int8", "int8": "s8s8"}.get(a, "bf16")
        suffix = "" if kind != "bf16" else f" ->{'f32' if out == 'float32' else 'bf16'}"
        self.name = f"{kind} {op} {m}x{n}x{k}{suffix}"
        self.key = self.name.replace(" ->", "_").replace(" ", "_")
        self.ops = 2 * m * n * k

    def tessel_computation(self):
        """tessel's placeholders and output: op.matmul(a, b), or op.dense(x, w) for B as (n, k)."""
        c = self.case
        a = ts.placeholder((c["m"], c["k"]), dtype=c["a"], name="a")
        b = ts.placeholder((c["n"], c["k"]) if c["transpose_b"] else (c["k"], c["n"]),
                           dtype=c["b"], name="b")
        op = ts.op.dense if c["transpose_b"] else ts.op.matmul
        # target: the CPU it runs on, where int8 x int8 becomes the +128-shifted uint8 x int8
        # product and its compensation (op/Matmul.h); the other products are the same for it.
        return [a, b], op(a, b, out_dtype=c["out"], target=TARGET)


def perf_cases(n):
    """Issue 55's two figures (n^3, barred), int8 x int8 (PyTorch's _int_mm: tessel's +128 shift
    onto vpdpbusd, oneDNN's s8 x s8), bfloat16 with its default bfloat16 result, and
    BERT-base's int8 dense layers at sequence 128 (x (M, K) times w (N, K)^T): QKV and output
    projections, FFN up, FFN down; then the same products as matmul, w given as (K, N) (oneDNN's
    side is the same: its weights are reordered outside the timing from either layout), which
    shows what tessel's packing of the transposed weights in each call costs."""
    int8 = {"a": "uint8", "out": "int32", "insn": "vpdpbusd", "feature": "avx512vnni",
            "isa": "AVX512_CORE_VNNI"}
    bf16 = {"a": "bfloat16", "insn": "vdpbf16ps", "feature": "avx512bf16",
            "isa": "AVX512_CORE_BF16"}
    s8s8 = dict(int8, a="int8")
    return [PerfCase("matmul", n, n, n, barred=True, **int8),
            PerfCase("matmul", n, n, n, barred=False, **s8s8),
            PerfCase("matmul", n, n, n, out="float32", barred=True, **bf16),
            PerfCase("matmul", n, n, n, out="bfloat16", barred=False, **bf16),
            *[PerfCase(op, 128, nn, kk, barred=False, **int8) for op in ("dense", "matmul")
              for nn, kk in ((768, 768), (3072, 768), (768, 3072))]]


class TesselKernel:
    """A built tessel kernel on its own copies of the inputs (page-aligned NDArrays) and output."""

    def __init__(self, module, values, case):
        self.func = module["main"]
        self.args = [ts.nd.array(v, copy=True) for v in values]
        self.out = ts.nd.array(lowp_gemm.empty_result(case), copy=True)
        self.asm = module.get_source("asm")

    def run(self):
        self.func(*self.args, self.out)


def build_tessel(pc, values, tuned_log=None):
    """tessel's kernel for the case: the default schedule's rules, or with tuned_log the log's
    best record (ts.apply_history_best). (kernel or None where the log holds no record for this
    computation, apply-best's warnings)."""
    args, out = pc.tessel_computation()
    if tuned_log is None:
        module = ts.build(ts.op.default_schedule(out, TARGET), args + [out], target=TARGET)
        return TesselKernel(module, values, pc.case), []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ts.TuningWarning)
        with ts.apply_history_best(tuned_log):
            module = ts.build(ts.create_schedule(out), args + [out], target=TARGET)
    notes = [str(w.message) for w in caught if issubclass(w.category, ts.TuningWarning)]
    if any("using the default schedule" in m for m in notes):
        return None, [f"no record of this computation in {tuned_log}"]
    return TesselKernel(module, values, pc.case), notes


def reference(pc, values):
    """NumPy's product in float64 (exact for int8: |sums| < 2^53) and the error allowed: None for
    int8 (exactly equal), else K float32 roundings of |A| @ |B| (+ the rounding to bfloat16)."""
    a, b = (v.astype(np.float64) for v in values)
    b = b.T if pc.case["transpose_b"] else b
    ref = a @ b
    if pc.case["a"] == "uint8":
        return ref, None
    bound = pc.case["k"] * float(np.finfo(np.float32).eps) * (np.abs(a) @ np.abs(b))
    if pc.case["out"] == "bfloat16":
        bound += 2.0 ** -8 * (np.abs(ref) + bound)
    return ref, bound


def mismatch(label, got, expected, bound):
    """None when got equals expected (within bound where there is one), else what differs."""
    got64, exp64 = got.astype(np.float64), expected.astype(np.float64)
    bad = got64 != exp64 if bound is None else ~(np.abs(got64 - exp64) <= bound)
    if not bad.any():
        return None
    i, j = np.argwhere(bad)[0]
    return (f"{label}: {int(bad.sum())} of {bad.size} elements differ, e.g. [{i}, {j}] = "
            f"{got64[i, j]} instead of {exp64[i, j]}")


def time_rounds(runners, rounds, warmup_rounds=2):
    """The median of each runner's samples (seconds a call) over interleaved rounds, one sample
    of each a round in an order that rotates, after warmup_rounds rounds not counted."""
    names = list(runners)
    samples = {name: [] for name in names}
    for r in range(warmup_rounds + rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            seconds = runners[name]()
            if r >= warmup_rounds:
                samples[name].append(seconds)
    return {name: statistics.median(v) for name, v in samples.items()}


def onednn_side(pc, workers, threads, tmp, ref, bound, tessel_result):
    """oneDNN held to the case's instruction set and unrestricted: {key: {"impl", "verbose",
    "sample"} or {"error"}}, each result checked against NumPy's and tessel's."""
    out = {}
    for isa in (pc.isa, UNRESTRICTED):
        if isa not in workers:
            workers[isa] = lowp_gemm.OneDnnWorker(isa, threads)
        w = workers[isa]
        path = os.path.join(tmp, "onednn_result.bin")
        try:
            impl = w.prepare(pc.case, path)
        except (RuntimeError, OSError) as e:  # OSError: the worker is gone
            out[isa] = {"error": str(e)}
            continue
        got = np.fromfile(path, lowp_gemm.NUMPY_DTYPES[pc.case["out"]]).reshape(ref.shape)
        why = (mismatch("oneDNN against NumPy", got, ref, bound) or
               mismatch("tessel against oneDNN", tessel_result, got,
                        None if bound is None else 2 * bound))
        ran = lowp_gemm.verbose_impl(w.verbose)
        if why or ran is None:
            out[isa] = {"error": why or f"no matmul line in oneDNN's verbose output ({impl})"}
            continue
        out[isa] = {"impl": ran, "verbose": [x for x in w.verbose if ",matmul," in x],
                    "sample": w.sample}
    return out


def perf_row(pc, workers, threads, args, tmp):
    """One case checked and measured: a dict of tessel's kernels' times ("times"), the count of
    the dot-product instruction in their code ("dot"), and oneDNN's side ("onednn": kernel,
    verbose lines, time, or an error), or tessel's error."""
    row = {"case": pc, "error": None, "onednn": {}, "tuned_note": None}
    values = lowp_gemm.draw_inputs(pc.case)
    ref, bound = reference(pc, values)
    kernels = {"tessel": build_tessel(pc, values)[0]}
    if args.tuned_log:
        tuned, notes = build_tessel(pc, values, args.tuned_log)
        row["tuned_note"] = "; ".join(notes) or None
        if tuned is not None:
            kernels["tuned"] = tuned
    for name, k in kernels.items():
        k.run()
        why = mismatch(f"{name} against NumPy", k.out.numpy(), ref, bound)
        if why:
            row["error"] = why
            return row
    row["dot"] = {name: k.asm.count(pc.insn) for name, k in kernels.items()}
    row["onednn"] = onednn_side(pc, workers, threads, tmp, ref, bound,
                                kernels["tessel"].out.numpy())
    runners = {}
    for name, k in kernels.items():
        calls = lowp_gemm.calls_per_sample(k.run)
        runners[name] = lambda k=k, calls=calls: lowp_gemm.take_sample(k.run, calls)
    for isa, o in row["onednn"].items():
        if "sample" in o:
            runners[isa or "all"] = o["sample"]
    t = time_rounds(runners, args.rounds)
    row["times"] = {name: t[name] for name in kernels}
    for isa, o in row["onednn"].items():
        if "sample" in o:
            o["seconds"] = t[isa or "all"]
    return row


def fmt_onednn(o, tessel_seconds):
    """oneDNN's columns (ms, kernel, ratio = tessel's speed / oneDNN's)."""
    if o is None or "seconds" not in o:
        return f"{'-':>9} {'(failed)' if o else '-':<26} {'-':>6}"
    return f"{o['seconds'] * 1e3:9.3f} {o['impl']:<26} {o['seconds'] / tessel_seconds:6.2f}"


def verdict(pc, ratio):
    """PASS / FAIL for issue 55's figures (FAIL too where oneDNN could not be measured), the
    ratio against the bar in parentheses for the others (information)."""
    if pc.barred and ratio is None:
        return "FAIL"
    if ratio is None:
        return "-"
    if pc.barred:
        return "PASS" if ratio >= PERF_BAR else "FAIL"
    return f"({'>=' if ratio >= PERF_BAR else '<'}{PERF_BAR})"


def print_perf(rows):
    print(f"{'case':<30} {'tessel ms':>9} {'GOP/s':>7} | {'oneDNN ms':>9} {'held to the ISA':<26} "
          f"{'ratio':>6} | {'oneDNN ms':>9} {'unrestricted':<26} {'ratio':>6} | bar")
    bench, failed = [], []
    for r in rows:
        pc = r["case"]
        if r.get("skip"):
            print(f"{pc.name:<30} skipped: {r['skip']}")
            continue
        if r["error"]:
            print(f"{pc.name:<30} tessel failed: {r['error']}")
            failed.append(pc.name)
            continue
        held, free = r["onednn"].get(pc.isa), r["onednn"].get(UNRESTRICTED)
        for name, seconds in r["times"].items():
            label = pc.name + ("" if name == "tessel" else " tuned")
            ratio = held["seconds"] / seconds if held and "seconds" in held else None
            v = verdict(pc, ratio)
            if v == "FAIL":
                failed.append(label)
            print(f"{label:<30} {seconds * 1e3:9.3f} {pc.ops / seconds / 1e9:7.1f} | "
                  f"{fmt_onednn(held, seconds)} | {fmt_onednn(free, seconds)} | {v}")
            key = pc.key + ("" if name == "tessel" else "_tuned")
            for isa, o in ((pc.isa, held), ("all", free)):
                if o and "seconds" in o:
                    bench.append(f"BENCH gemm_lowp_cpu perf_{key} "
                                 f"tessel={pc.ops / seconds / 1e9:.1f} "
                                 f"onednn_{isa.lower()}={pc.ops / o['seconds'] / 1e9:.1f} "
                                 f"ratio={o['seconds'] / seconds:.3f}")
    return bench, failed


def print_perf_notes(rows, workers, tuned_log):
    if not tuned_log:
        print("tuned: not measured (pass --tune TRIALS or --tuned-log)")
    for r in rows:
        times = r.get("times", {})
        if "tuned" in times:
            print(f"tuned / default {r['case'].name}: "
                  f"{times['tessel'] / times['tuned']:.3f} x the default's speed")
    for r in rows:
        if r.get("tuned_note"):
            print(f"tuned {r['case'].name}: {r['tuned_note']}")
    for isa, w in workers.items():
        print(f"oneDNN {'held to ' + isa if isa else 'unrestricted'}: runs {w.isa_line()!r}")
    print("oneDNN's verbose lines of the timed matmuls (ONEDNN_VERBOSE=1, one untimed call):")
    for r in rows:
        for isa, o in r["onednn"].items():
            for line in o.get("verbose", []):
                print(f"  {line}")
            if "error" in o:
                print(f"  {r['case'].name}, {isa or 'unrestricted'}: {o['error']}")
    print("tessel's default kernels, their dot-product instructions in the code: " +
          ", ".join(f"{r['case'].name}: {r['dot']['tessel']} {r['case'].insn}"
                    for r in rows if r.get("dot")))


def tune_case(pc, trials, log, seed):
    """Tunes the case's computation (its DAG, for TARGET) for `trials` trials into the log `log`
    (resumed where it holds the task's records): ts.auto_schedule.tune with 64 measurements a
    round, the default schedule measured first (so the log's best is never slower than it).
    Prints the tuner's own summary; the caller re-times the log's best."""
    _, out = pc.tessel_computation()
    task = ts.SearchTask(dag=ts.make_tensor_dag([out]), target=TARGET)
    print(f"tuning {pc.name} for {trials} trials (seed {seed}) into {log} ...", flush=True)
    start = time.perf_counter()
    result = ts.auto_schedule.tune(task, trials=trials, log_file=log, seed=seed,
                                   measurements_per_round=64, progress=False,
                                   print_schedule=False)
    wall = time.perf_counter() - start
    print(f"tuned {pc.name}: {result.trials} trials in {wall:.0f} s; the tuner's best "
          f"{pc.ops / result.best_seconds / 1e9:.1f} GOP/s ({result.best_seconds * 1e3:.3f} ms, "
          f"the median of its measurements)", flush=True)


def load_averages():
    """The 1, 5 and 15 minute load averages, as text."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def perf_section(args):
    threads = int(os.environ["TESSEL_NUM_THREADS"])
    target = ts.Target("llvm")
    print(f"\nperf: int8 and bfloat16 GEMM, tessel's default schedule (shipped tuning logs off)"
          f" against oneDNN's matmul primitive (weights reordered into its layout outside the "
          f"timing),\nboth on {threads} threads (oneDNN's OpenMP: "
          f"{' '.join(f'{k}={v}' for k, v in lowp_gemm.omp_environment().items())}); oneDNN held "
          f"to the instructions tessel's tiles use (ONEDNN_MAX_CPU_ISA, a process of its own) and "
          f"unrestricted")
    print(f"CPU: {target!r}")
    print(f"medians of {args.rounds} interleaved rounds after 2; a sample: "
          f"{lowp_gemm.WARM_SECONDS * 1e3:g} ms of untimed calls, then "
          f"{lowp_gemm.SAMPLE_SECONDS * 1e3:g} ms of calls timed; ratio = tessel's speed / "
          f"oneDNN's;\nbar (issue 55): >= {PERF_BAR} x oneDNN held to the ISA for the int8 and "
          f"bf16 ->f32 {args.perf_n}^3 rows; the others are information\n")
    why_not = lowp_gemm.onednn_missing()
    if why_not:
        print(f"perf section skipped: {why_not}")
        return True
    ts.auto_schedule.use_shipped_logs(False)
    load_before = load_averages()
    rows, workers = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.tune:
            first = perf_cases(args.perf_n)[0]  # int8 n^3 (uint8 x int8 -> int32)
            if target.has_feature(first.feature):
                args.tuned_log = args.tune_log or os.path.join(tmp, "tune_int8.jsonl")
                tune_case(first, args.tune, args.tuned_log, args.tune_seed)
            else:
                print(f"tuning skipped: this CPU lacks {first.feature}")
        try:
            for pc in perf_cases(args.perf_n):
                if not target.has_feature(pc.feature):
                    rows.append({"case": pc, "onednn": {}, "skip": f"this CPU lacks "
                                 f"{pc.feature} ({pc.insn}: tessel's tiles, oneDNN's {pc.isa})"})
                    continue
                rows.append(perf_row(pc, workers, threads, args, tmp))
        finally:
            for w in workers.values():
                w.close()
    print(f"load average before: {load_before}, after: {load_averages()}")
    bench, failed = print_perf(rows)
    print_perf_notes(rows, workers, args.tuned_log)
    print("\n".join(bench))
    sys.stdout.flush()
    for name in failed:
        print(f"FAIL {name}: below {PERF_BAR} x oneDNN held to the same instructions, or failed",
              file=sys.stderr)
    return not failed


# The sections in order: a function of the parsed arguments that prints its part and returns
# whether its bars held. `--numerics-only` and `--perf-only` keep one.
SECTIONS = [("numerics", numerics_section), ("perf", perf_section)]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    only = p.add_mutually_exclusive_group()
    only.add_argument("--numerics-only", action="store_true", help="only the numerics section")
    only.add_argument("--perf-only", action="store_true", help="only the perf section")
    p.add_argument("--mn", type=int, default=256, help="matmul's M = N (default 256)")
    p.add_argument("--rows", type=int, default=256, help="softmax's, layer norm's rows (256)")
    p.add_argument("--k", type=int, default=4096, help="the reduction's length (default 4096)")
    p.add_argument("--perf-n", type=int, default=1024, help="the perf figures' M = N = K (1024)")
    p.add_argument("--rounds", type=int, default=15, help="the perf section's timed rounds (15)")
    p.add_argument("--tuned-log", metavar="PATH",
                   help="a tuning log: its best record of each perf case timed as 'tuned' too")
    p.add_argument("--tune", type=int, metavar="TRIALS", default=0,
                   help="first tune the int8 n^3 matmul for TRIALS trials (issue 55: 256) and "
                        "time its best as 'tuned' (replaces --tuned-log)")
    p.add_argument("--tune-log", metavar="PATH",
                   help="--tune's log (kept; resumed where it exists); default: a temporary file")
    p.add_argument("--tune-seed", type=int, default=1, help="--tune's seed (1)")
    args = p.parse_args()
    if "llvm" not in ts.targets():
        raise SystemExit("gemm_lowp_cpu: tessel was built without LLVM")
    ok = True
    for name, section in SECTIONS:
        if (args.numerics_only and name != "numerics") or (args.perf_only and name != "perf"):
            continue
        ok = section(args) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
