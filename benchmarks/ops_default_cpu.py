"""Every operator of the library (ts.op) at a typical size on the CPU: its default schedule
(ts.op.default_schedule(outputs, "llvm")) against the plain loop nest (ts.create_schedule: no
step) and, where NumPy has the operator, against NumPy, in one process (issue 21).

Each case is first checked: the default schedule's outputs against the loop nest's (both run on
the same random, non-zero inputs) and against NumPy's where there is one. Then the three are timed
interleaved, one sample of each per round (in an order that rotates), a sample being the mean time of as many calls as last
2 ms (tessel kernels called with tessel NDArrays; NumPy as a user writes it, allocating its
result), after a warm-up call; the median of the rounds counts.
tessel runs on TESSEL_NUM_THREADS threads (default: all cores); NumPy's element-wise functions on
one thread, its matmul on its BLAS's threads.

Prints one table (milliseconds; speedup = loop nest / default; vs NumPy = NumPy / default, so
above 1 means the default schedule is faster), then per case
  BENCH ops_default_cpu <case> tessel=<calls/s> loop_nest=<calls/s> ratio=<x>
  BENCH ops_default_cpu <case> tessel=<calls/s> numpy=<calls/s> ratio=<x>   (where NumPy has it)
Bar (issue 21): no default schedule slower than the plain loop nest. Memory-bound element-wise
and data-movement operators compile to the same vector loop either way (LLVM vectorises the plain
loop nest itself), and their ratios scatter around 1 by the timing noise (a few per cent on a quiet
machine, more on a shared one): ratios in [0.9, 1) are listed as equal within the noise, ratios
below 0.9 as slower.

Then the matrix products (issue 62), without the loop nest (too slow at these sizes): matmul at
20 shapes drawn log-uniformly from [32, 4096]^3 with a fixed seed, batch_matmul at BERT-base's
two attention shapes (sequence 128) and three odd ones, dense with bias and GELU at three
shapes; each against oneDNN's matmul primitive (support/onednn_matmul.cpp: the batch in one
call, dense's bias and GELU as post-ops; its OpenMP threads as many as tessel's; dnnl_sgemm
without the epilogue where the helper is not built) and NumPy, in interleaved rounds of 20 ms
samples after 10 ms of untimed calls, after checking tessel's and oneDNN's results against NumPy's. Prints the CPU
(tessel's Target.describe(): cores, vector width, caches), one row per case, then
  BENCH ops_default_cpu gemm_<case> tessel=<calls/s> onednn=<calls/s> ratio=<x>
and the geometric mean of the matmul ratios and their minimum. Bar (issue 62): matmul geomean >=
0.8 x oneDNN, none below 0.5 x; batch_matmul and dense each >= 0.8 x.
Usage: benchmarks/run.sh ops_default_cpu [--rounds N] [--only NAME ...] [--gemm-only | --no-gemm]
"""
import argparse
import math
import os
import statistics
import sys
import time

# OpenBLAS's threads (NumPy's matmul) would spin for up to 2^28 cycles (a tenth of a second)
# after each call, taking the cores of the runner timed after them: they wait 2^4 instead (as in
# benchmarks/gemm_cpu.cpp). oneDNN's OpenMP threads, as many as tessel's, keep their default
# (a short spin, over before the next sample's warm-up ends). Read when the libraries load.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
os.environ.setdefault("OMP_NUM_THREADS",
                      os.environ.get("TESSEL_NUM_THREADS", str(os.cpu_count())))

import numpy as np  # noqa: E402

import tessel as ts  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import onednn_sgemm  # noqa: E402

# This benchmark measures the default schedules' rules, and the plain loop nest as written: not
# the shipped tuning logs' records, which op.default_schedule and build() would otherwise use.
ts.auto_schedule.use_shipped_logs(False)

# Seconds of untimed calls before each timed sample: longer than tessel's workers spin after a
# call (TESSEL_SPIN_US, 200 us by default), so that they do not take the next runner's cores
# (sleeping instead lets the machine go idle, and the next calls start cold).
WARM_SECONDS = 0.001

op = ts.op


def rand(shape, seed, dtype="float32", positive=False):
    v = np.random.default_rng(seed).standard_normal(shape)
    if positive:
        v = np.abs(v) + 0.5
    return v.astype(dtype)


def ph(shape, name, dtype="float32"):
    return ts.placeholder(tuple(shape), dtype=dtype, name=name)


class Case:
    """One operator instance: its placeholders and input values, its outputs, and NumPy's
    version (a function of the input arrays, or None)."""

    def __init__(self, name, size, inputs, values, outputs, numpy_fn=None, tol=1e-4):
        self.name, self.size = name, size
        self.inputs, self.values = inputs, values
        self.outputs = outputs if isinstance(outputs, list) else [outputs]
        self.numpy_fn, self.tol = numpy_fn, tol


def np_conv2d_nchw(x, w, stride, pad):
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - r) // stride + 1, (wd + 2 * pad - s) // stride + 1
    out = np.zeros((n, k, oh, ow), dtype="float32")
    for i in range(r):
        for j in range(s):
            patch = xp[:, :, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride]
            out += np.einsum("nchw,kc->nkhw", patch, w[:, :, i, j], optimize=True)
    return out


def cases():
    """The operators at typical sizes (deep-learning shapes: ResNet-50, BERT-base)."""
    out = []

    def unary(name, fn, np_fn, shape=(1024, 1024), positive=False, tol=1e-4):
        x = ph(shape, "x")
        out.append(Case(name, "x".join(map(str, shape)), [x], [rand(shape, 1, positive=positive)],
                        fn(x), np_fn, tol))

    unary("relu", op.relu, lambda x: np.maximum(x, 0))
    unary("gelu", op.gelu, None, tol=1e-3)
    unary("silu", op.silu, lambda x: x / (1 + np.exp(-x)), tol=1e-3)
    unary("sigmoid", op.sigmoid, lambda x: 1 / (1 + np.exp(-x)), tol=1e-3)
    unary("tanh", op.tanh, np.tanh, tol=1e-3)
    unary("exp", op.exp, np.exp, tol=1e-3)
    unary("log", op.log, np.log, positive=True, tol=1e-3)
    unary("sqrt", op.sqrt, np.sqrt, positive=True)
    unary("abs", op.abs, np.abs)
    unary("negative", op.negative, np.negative)
    unary("cast", lambda x: op.cast(x, "int32"), lambda x: x.astype("int32"))
    unary("clip", lambda x: op.clip(x, -0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5))

    def binary(name, fn, np_fn, positive=False):
        a, b = ph((1024, 1024), "a"), ph((1024,), "b")
        vals = [rand((1024, 1024), 1, positive=positive), rand((1024,), 2, positive=positive)]
        out.append(Case(name, "1024x1024,1024", [a, b], vals, fn(a, b), np_fn, 1e-3))

    binary("add", op.add, np.add)
    binary("subtract", op.subtract, np.subtract)
    binary("multiply", op.multiply, np.multiply)
    binary("divide", op.divide, np.divide, positive=True)
    binary("maximum", op.maximum, np.maximum)
    binary("minimum", op.minimum, np.minimum)
    binary("power", op.power, np.power, positive=True)
    c, a, b = ph((1024, 1024), "c", "bool"), ph((1024, 1024), "a"), ph((1024, 1024), "b")
    out.append(Case("where", "1024x1024", [c, a, b],
                    [rand((1024, 1024), 1) > 0, rand((1024, 1024), 2), rand((1024, 1024), 3)],
                    op.where(c, a, b), np.where))

    a, b = ph((256, 256), "a"), ph((256, 256), "b")
    out.append(Case("matmul", "256^3", [a, b], [rand((256, 256), 1), rand((256, 256), 2)],
                    op.matmul(a, b), np.matmul))
    out.append(Case("matmul_tb", "256^3", [a, b], [rand((256, 256), 1), rand((256, 256), 2)],
                    op.matmul(a, b, transpose_b=True), lambda x, y: x @ y.T))
    a, b = ph((12, 128, 64), "a"), ph((12, 64, 128), "b")
    out.append(Case("batch_matmul", "12x128x128x64", [a, b],
                    [rand((12, 128, 64), 1), rand((12, 64, 128), 2)], op.batch_matmul(a, b),
                    np.matmul))
    x, w, bias = ph((128, 768), "x"), ph((768, 768), "w"), ph((768,), "bias")
    out.append(Case("dense_bias_relu", "128x768x768", [x, w, bias],
                    [rand((128, 768), 1), rand((768, 768), 2), rand((768,), 3)],
                    op.dense(x, w, bias, activation="relu"),
                    lambda x, w, b: np.maximum(x @ w.T + b, 0), 1e-3))
    x, w = ph((1, 2048), "x"), ph((1000, 2048), "w")
    out.append(Case("dense", "1x1000x2048", [x, w], [rand((1, 2048), 1), rand((1000, 2048), 2)],
                    op.dense(x, w), lambda x, w: x @ w.T, 1e-3))

    x, w = ph((1, 64, 56, 56), "x"), ph((64, 64, 3, 3), "w")
    vx, vw = rand((1, 64, 56, 56), 1), rand((64, 64, 3, 3), 2)
    out.append(Case("conv2d_nchw_relu", "64->64,3x3,56", [x, w], [vx, vw],
                    op.relu(op.conv2d_nchw(x, w, padding=1)),
                    lambda x, w: np.maximum(np_conv2d_nchw(x, w, 1, 1), 0), 1e-3))
    x1, w1 = ph((1, 64, 56, 56), "x"), ph((256, 64, 1, 1), "w")
    out.append(Case("conv2d_nchw_1x1", "64->256,1x1,56", [x1, w1],
                    [vx, rand((256, 64, 1, 1), 2)], op.conv2d_nchw(x1, w1),
                    lambda x, w: np_conv2d_nchw(x, w, 1, 0), 1e-3))
    xh, wh = ph((1, 56, 56, 64), "x"), ph((3, 3, 64, 64), "w")
    out.append(Case("conv2d_nhwc", "64->64,3x3,56", [xh, wh],
                    [rand((1, 56, 56, 64), 1), rand((3, 3, 64, 64), 2)],
                    op.conv2d_nhwc(xh, wh, padding=1), None, 1e-3))
    xd, wd = ph((1, 64, 112, 112), "x"), ph((64, 1, 3, 3), "w")
    out.append(Case("depthwise_conv2d", "64,3x3,112", [xd, wd],
                    [rand((1, 64, 112, 112), 1), rand((64, 1, 3, 3), 2)],
                    op.depthwise_conv2d_nchw(xd, wd, padding=1), None, 1e-3))
    xt, wt = ph((1, 64, 28, 28), "x"), ph((64, 32, 3, 3), "w")
    out.append(Case("conv2d_transpose", "64->32,3x3,s2,28", [xt, wt],
                    [rand((1, 64, 28, 28), 1), rand((64, 32, 3, 3), 2)],
                    op.conv2d_transpose_nchw(xt, wt, stride=2, padding=1, output_padding=1), None,
                    1e-3))

    x = ph((1, 64, 112, 112), "x")
    vx = rand((1, 64, 112, 112), 1)
    out.append(Case("max_pool2d", "64,3x3,s2,112", [x], [vx],
                    op.pool2d(x, "max", 3, stride=2, padding=1), None))
    out.append(Case("avg_pool2d", "64,3x3,s2,112", [x], [vx],
                    op.pool2d(x, "avg", 3, stride=2, padding=1), None))
    x = ph((1, 2048, 7, 7), "x")
    out.append(Case("global_avg_pool2d", "2048,7x7", [x], [rand((1, 2048, 7, 7), 1)],
                    op.global_pool2d(x, "avg"), lambda x: x.mean(axis=(2, 3), keepdims=True)))
    x = ph((1, 512, 28, 28), "x")
    out.append(Case("adaptive_avg_pool2d", "512,28->7", [x], [rand((1, 512, 28, 28), 1)],
                    op.adaptive_avg_pool2d(x, (7, 7)),
                    lambda x: x.reshape(1, 512, 7, 4, 7, 4).mean(axis=(3, 5))))

    def np_softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    x = ph((128, 768), "x")
    vx = rand((128, 768), 1)
    out.append(Case("softmax", "128x768", [x], [vx], op.softmax(x, axis=-1), np_softmax, 1e-3))
    out.append(Case("log_softmax", "128x768", [x], [vx], op.log_softmax(x, axis=-1),
                    lambda x: np.log(np_softmax(x)), 1e-3))
    g, b = ph((768,), "gamma"), ph((768,), "beta")
    vg, vb = rand((768,), 2), rand((768,), 3)
    out.append(Case("layer_norm", "128x768", [x, g, b], [vx, vg, vb], op.layer_norm(x, g, b),
                    lambda x, g, b: (x - x.mean(-1, keepdims=True)) /
                    np.sqrt(x.var(-1, keepdims=True) + 1e-5) * g + b, 1e-3))
    out.append(Case("rms_norm", "128x768", [x, g], [vx, vg], op.rms_norm(x, g),
                    lambda x, g: x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * g, 1e-3))
    z = ph((1, 64, 56, 56), "z")
    vs = [ph((64,), n) for n in ("gamma", "beta", "mean", "var")]
    vv = [rand((64,), 2), rand((64,), 3), rand((64,), 4), rand((64,), 5, positive=True)]
    cc = lambda a: a.reshape(1, 64, 1, 1)  # noqa: E731
    out.append(Case("batch_norm", "64x56x56", [z] + vs, [rand((1, 64, 56, 56), 1)] + vv,
                    op.batch_norm(z, *vs),
                    lambda z, g, b, m, v: (z - cc(m)) / np.sqrt(cc(v) + 1e-5) * cc(g) + cc(b),
                    1e-3))

    x = ph((1024, 1024), "x")
    vx = rand((1024, 1024), 1)
    out.append(Case("sum_axis0", "1024x1024", [x], [vx], op.sum(x, axis=0),
                    lambda x: x.sum(axis=0), 1e-3))
    out.append(Case("sum_axis1", "1024x1024", [x], [vx], op.sum(x, axis=1),
                    lambda x: x.sum(axis=1), 1e-3))
    out.append(Case("mean", "1024x1024", [x], [vx], op.mean(x, axis=1),
                    lambda x: x.mean(axis=1), 1e-3))
    out.append(Case("max", "1024x1024", [x], [vx], op.max(x, axis=1), lambda x: x.max(axis=1)))
    out.append(Case("min", "1024x1024", [x], [vx], op.min(x, axis=0), lambda x: x.min(axis=0)))
    out.append(Case("argmax", "1024x1024", [x], [vx], op.argmax(x, 1),
                    lambda x: x.argmax(axis=1).astype("int32")))
    out.append(Case("argmin", "1024x1024", [x], [vx], op.argmin(x, 0),
                    lambda x: x.argmin(axis=0).astype("int32")))
    out.append(Case("transpose", "1024x1024", [x], [vx], op.transpose(x, (1, 0)),
                    lambda x: np.ascontiguousarray(x.T)))
    out.append(Case("reshape", "1024x1024", [x], [vx], op.reshape(x, (512, 2048)),
                    lambda x: x.reshape(512, 2048).copy()))
    out.append(Case("pad", "1024x1024", [x], [vx], op.pad(x, (1, 1), (1, 1)),
                    lambda x: np.pad(x, 1)))
    a, b = ph((512, 1024), "a"), ph((512, 1024), "b")
    out.append(Case("concatenate", "2x512x1024", [a, b],
                    [rand((512, 1024), 1), rand((512, 1024), 2)], op.concatenate([a, b], axis=0),
                    lambda a, b: np.concatenate([a, b], 0)))
    out.append(Case("split", "1024x1024/4", [x], [vx], list(op.split(x, 4, axis=1)),
                    lambda x: [p.copy() for p in np.split(x, 4, axis=1)]))
    t, idx = ph((30522, 768), "table"), ph((128,), "idx", "int32")
    out.append(Case("take", "30522x768[128]", [t, idx],
                    [rand((30522, 768), 1),
                     np.random.default_rng(2).integers(0, 30522, 128).astype("int32")],
                    op.take(t, idx, axis=0), lambda t, i: np.take(t, i, axis=0)))
    return out


def build(case, schedule):
    return ts.build(schedule, case.inputs + case.outputs, target="llvm")


def result_arrays(case):
    return [ts.nd.empty(tuple(int(d) for d in t.shape), t.dtype) for t in case.outputs]


def check(case, got, expected, what):
    expected = expected if isinstance(expected, list) else [expected]
    for g, e in zip(got, expected):
        e = np.asarray(e)
        if g.dtype.kind in "iub":
            ok = np.array_equal(g, e)
        else:
            scale = max(float(np.max(np.abs(e))), 1.0)
            ok = np.allclose(g, e, rtol=case.tol, atol=case.tol * scale)
        if not ok:
            raise SystemExit(f"{case.name}: the default schedule differs from {what}")


def run_case(case, rounds):
    default_s = op.default_schedule(case.outputs, "llvm")
    plain_s = ts.create_schedule(case.outputs)
    f_default, f_plain = build(case, default_s)["main"], build(case, plain_s)["main"]
    inputs = [ts.nd.array(v, copy=True) for v in case.values]  # aligned (see gemm_retime.py)
    out_default, out_plain = result_arrays(case), result_arrays(case)
    f_default(*inputs, *out_default)
    f_plain(*inputs, *out_plain)
    got = [o.numpy() for o in out_default]
    check(case, got, [o.numpy() for o in out_plain], "the loop nest")
    if case.numpy_fn:
        check(case, got, case.numpy_fn(*case.values), "NumPy")
    runs = {
        "default": lambda: f_default(*inputs, *out_default),
        "plain": lambda: f_plain(*inputs, *out_plain),
    }
    if case.numpy_fn:
        runs["numpy"] = lambda: case.numpy_fn(*case.values)
    return time_runs(runs, rounds)


def time_runs(runs, rounds, sample_seconds=2e-3, warm_seconds=WARM_SECONDS, budget_seconds=4.0):
    """The median time of each runner over interleaved rounds, and the number of rounds."""
    # Warm-up; then each sample is the mean of enough calls to last >= 2 ms (short kernels are
    # not timed one call at a time), with a round count that keeps a case to a few seconds.
    first = {}
    for name, fn in runs.items():
        fn()
        t0 = time.perf_counter()
        fn()
        first[name] = time.perf_counter() - t0
    number = {name: max(1, int(sample_seconds / max(t, 1e-7))) for name, t in first.items()}
    per_round = sum((first[n] * number[n] + warm_seconds) for n in runs)
    rounds = max(3, min(rounds, int(budget_seconds / max(per_round, 1e-6))))
    samples = {name: [] for name in runs}
    names = list(runs)
    for r in range(rounds):
        # The order rotates each round: a runner following another on the same inputs finds them
        # in the cache, which would favour whoever always runs second.
        for name in names[r % len(names):] + names[:r % len(names)]:
            fn = runs[name]
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < warm_seconds:
                fn()
            t0 = time.perf_counter()
            for _ in range(number[name]):
                fn()
            samples[name].append((time.perf_counter() - t0) / number[name])
    return {name: statistics.median(v) for name, v in samples.items()}, rounds


def gemm_cases():
    """(name, size, inputs, values, outputs, onednn call, transpose_b) of the matrix products."""
    rng = np.random.default_rng(62)
    out = []
    shapes = [tuple(int(round(math.exp(x))) for x in rng.uniform(math.log(32), math.log(4096), 3))
              for _ in range(20)]
    for m, n, k in shapes:
        a, b = ph((m, k), "a"), ph((k, n), "b")
        out.append((f"matmul_{m}x{n}x{k}", f"{m}x{n}x{k}", [a, b],
                    [rand((m, k), 1), rand((k, n), 2)], op.matmul(a, b), False))
    for bsz, m, n, k in [(12, 128, 128, 64), (12, 128, 64, 128), (7, 100, 77, 33),
                         (3, 257, 129, 511), (16, 31, 500, 64)]:
        a, b = ph((bsz, m, k), "a"), ph((bsz, k, n), "b")
        out.append((f"batch_matmul_{bsz}x{m}x{n}x{k}", f"{bsz}x{m}x{n}x{k}", [a, b],
                    [rand((bsz, m, k), 1), rand((bsz, k, n), 2)], op.batch_matmul(a, b), False))
    for m, n, k in [(128, 3072, 768), (128, 768, 3072), (77, 1000, 333)]:
        x, w, bias = ph((m, k), "x"), ph((n, k), "w"), ph((n,), "bias")
        out.append((f"dense_gelu_{m}x{n}x{k}", f"{m}x{n}x{k}", [x, w, bias],
                    [rand((m, k), 1), rand((n, k), 2), rand((n,), 3)],
                    op.dense(x, w, bias, activation="gelu"), True))
    return out


def gemm_section(rounds, only):
    threads = int(os.environ["OMP_NUM_THREADS"])
    if onednn_sgemm.load(threads) is None:
        print("gemm section skipped: libdnnl (oneDNN) is not installed")
        return
    which = ("its matmul primitive, dense's bias and GELU as post-ops"
             if onednn_sgemm.Matmul(1, 2, 2, 2).ok else
             "dnnl_sgemm, without dense's bias and GELU: the helper library is not built")
    print(f"\nmatrix products: the default schedule against oneDNN ({which}) and NumPy, "
          f"{threads} threads")
    print(f"CPU: {ts.Target('llvm')!r}")
    header = (f"{'case':<30} {'default ms':>11} {'oneDNN ms':>10} {'numpy ms':>10} "
              f"{'vs oneDNN':>10} {'vs numpy':>9}")
    print(header)
    ratios, lines = {}, []
    for name, size, inputs, values, output, transpose_b in gemm_cases():
        if only and name not in only:
            continue
        f = ts.build(op.default_schedule(output, "llvm"), inputs + [output], target="llvm")["main"]
        args = [ts.nd.array(v, copy=True) for v in values]
        result = ts.nd.empty(tuple(int(d) for d in output.shape), output.dtype)
        f(*args, result)
        a, b = values[0], values[1]
        prod = np.matmul(a, np.swapaxes(b, -1, -2) if transpose_b else b)
        expected = prod
        if name.startswith("dense"):
            z = prod + values[2]
            expected = 0.5 * z * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))
        scale = max(1.0, float(np.abs(expected).max()))
        if not np.allclose(result.numpy(), expected, rtol=1e-3, atol=1e-3 * scale):
            raise SystemExit(f"{name}: the default schedule differs from NumPy")
        c = np.empty(prod.shape, "float32")
        dense = name.startswith("dense")
        batch, m, n = (prod.shape if prod.ndim == 3 else (1,) + prod.shape)
        primitive = onednn_sgemm.Matmul(batch, m, n, a.shape[-1], transpose_b, bias=dense,
                                        gelu=dense)
        if primitive.ok:  # oneDNN's matmul primitive, the epilogue as its post-ops
            bias = values[2] if dense else None
            onednn = lambda: primitive(a, b, bias, c)  # noqa: E731
        else:  # dnnl_sgemm, without the epilogue
            onednn = lambda: onednn_sgemm.sgemm(a, b, c, transpose_b)  # noqa: E731
        onednn()
        if not np.allclose(c, expected if primitive.ok else prod, rtol=1e-3, atol=1e-3 * scale):
            raise SystemExit(f"{name}: oneDNN's result differs from NumPy's")
        runs = {"default": lambda: f(*args, result),
                "onednn": onednn,
                "numpy": lambda: np.matmul(a, np.swapaxes(b, -1, -2) if transpose_b else b)}
        # Samples of 20 ms after 10 ms of untimed calls: a library's threads waking from sleep
        # or still spinning after the previous runner cost nothing that counts.
        t, n = time_runs(runs, rounds, sample_seconds=0.02, warm_seconds=0.01, budget_seconds=8.0)
        r = t["onednn"] / t["default"]
        ratios[name] = r
        print(f"{name:<30} {t['default'] * 1e3:11.3f} {t['onednn'] * 1e3:10.3f} "
              f"{t['numpy'] * 1e3:10.3f} {r:10.2f} {t['numpy'] / t['default']:9.2f}  "
              f"({n} rounds)", flush=True)
        lines.append(f"BENCH ops_default_cpu gemm_{name} tessel={1 / t['default']:.2f} "
                     f"onednn={1 / t['onednn']:.2f} ratio={r:.3f}")
    mm = [r for n, r in ratios.items() if n.startswith("matmul")]
    if mm:
        geo = math.exp(statistics.mean(math.log(x) for x in mm))
        print(f"matmul: geometric mean {geo:.2f} x oneDNN over {len(mm)} shapes, lowest "
              f"{min(mm):.2f} x")
    print("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=51, help="interleaved rounds (fewer for slow cases)")
    p.add_argument("--only", nargs="*", help="only these cases")
    p.add_argument("--gemm-only", action="store_true", help="only the matrix products")
    p.add_argument("--no-gemm", action="store_true", help="without the matrix products")
    args = p.parse_args()
    if "llvm" not in ts.targets():
        raise SystemExit("ops_default_cpu: tessel was built without LLVM")
    if args.gemm_only:
        gemm_section(args.rounds, args.only)
        return
    selected = [c for c in cases() if not args.only or c.name in args.only]
    threads = os.environ.get("TESSEL_NUM_THREADS", str(os.cpu_count()))
    print(f"ops_default_cpu: {len(selected)} cases, tessel on {threads} threads, median of "
          f"up to {args.rounds} interleaved rounds")
    header = (f"{'operator':<20} {'size':<18} {'default ms':>11} {'loop nest ms':>13} "
              f"{'numpy ms':>10} {'speedup':>8} {'vs numpy':>9}")
    rows, lines, slower, speedups = [], [], [], []
    for case in selected:
        t, rounds = run_case(case, args.rounds)
        speedup = t["plain"] / t["default"]
        np_ms = f"{t['numpy'] * 1e3:10.3f}" if "numpy" in t else f"{'-':>10}"
        vs_np = f"{t['numpy'] / t['default']:9.2f}" if "numpy" in t else f"{'-':>9}"
        row = (f"{case.name:<20} {case.size:<18} {t['default'] * 1e3:11.3f} "
               f"{t['plain'] * 1e3:13.3f} {np_ms} {speedup:8.2f} {vs_np}")
        print(row, f"  ({rounds} rounds)", flush=True)
        rows.append(row)
        lines.append(f"BENCH ops_default_cpu {case.name} tessel={1 / t['default']:.1f} "
                     f"loop_nest={1 / t['plain']:.1f} ratio={speedup:.3f}")
        if "numpy" in t:
            lines.append(f"BENCH ops_default_cpu {case.name} tessel={1 / t['default']:.1f} "
                         f"numpy={1 / t['numpy']:.1f} ratio={t['numpy'] / t['default']:.3f}")
        speedups.append(speedup)
        if speedup < 1:
            slower.append((case.name, speedup))
    print()
    print(header)
    print("\n".join(rows))
    geo = math.exp(statistics.mean(math.log(x) for x in speedups))
    print(f"geometric mean speedup over the loop nest: {geo:.2f}")
    noise = [f"{n} {x:.2f}" for n, x in slower if x >= 0.9]
    if noise:
        print("equal to the loop nest within the noise (0.9 <= speedup < 1): " + ", ".join(noise))
    for name, x in slower:
        if x < 0.9:
            print(f"{name}: the default schedule is slower than the loop nest ({x:.2f})",
                  file=sys.stderr)
    print("\n".join(lines))
    if not args.no_gemm:
        gemm_section(args.rounds, args.only)


if __name__ == "__main__":
    main()
