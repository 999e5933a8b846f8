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

Perf: not written yet (int8 and bfloat16 GEMM speed against oneDNN; see SECTIONS below).
Usage: benchmarks/run.sh gemm_lowp_cpu [--numerics-only] [--mn N] [--rows N] [--k K]
"""
import argparse
import sys

import ml_dtypes
import numpy as np

import tessel as ts

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


# The sections in order: a function of the parsed arguments that prints its part and returns
# whether its bars held. `--numerics-only` keeps the first. The perf section (issue 55: int8 and
# bfloat16 GEMM against oneDNN's matmul primitive, benchmarks/support/onednn_matmul.cpp) goes
# here as ("perf", perf_section), with its own options in main().
SECTIONS = [("numerics", numerics_section)]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--numerics-only", action="store_true", help="only the numerics section")
    p.add_argument("--mn", type=int, default=256, help="matmul's M = N (default 256)")
    p.add_argument("--rows", type=int, default=256, help="softmax's, layer norm's rows (256)")
    p.add_argument("--k", type=int, default=4096, help="the reduction's length (default 4096)")
    args = p.parse_args()
    if "llvm" not in ts.targets():
        raise SystemExit("gemm_lowp_cpu: tessel was built without LLVM")
    ok = True
    for name, section in SECTIONS:
        if args.numerics_only and name != "numerics":
            continue
        ok = section(args) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
