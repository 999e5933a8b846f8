"""Tutorial 4: a 2-D convolution on the CPU.

A convolution layer (NCHW layout, 3x3 kernel, stride 1, padding 1) in the tensor-expression
language: a padding stage and a compute with three reduce axes. Then schedules for the CPU:
inline the padding, tile the output image, vectorise along its rows, and run the output channels
in parallel. Each step is checked against a numpy reference and timed.

Run:  python tutorials/04_conv2d_cpu.py [--small]
"""
import sys

import numpy as np

import tessel as ts

SMALL = "--small" in sys.argv
BATCH, CI, CO, H, W = (1, 4, 8, 14, 14) if SMALL else (1, 64, 64, 56, 56)
KH = KW = 3
PAD = 1
FLOPS = 2.0 * BATCH * CO * H * W * CI * KH * KW

# ---------------------------------------------------------------------------------------------
# 1. The computation
#
# Padding is a compute of its own: ts.if_then_else reads the input only inside the image (it
# evaluates just the taken branch, so the out-of-range read never happens). Note `&` for the
# logical and: Python's `and` cannot be traced.
Data = ts.placeholder((BATCH, CI, H, W), name="Data")
Kernel = ts.placeholder((CO, CI, KH, KW), name="Kernel")
Pad = ts.compute(
    (BATCH, CI, H + 2 * PAD, W + 2 * PAD),
    lambda n, c, y, x: ts.if_then_else(
        (y >= PAD) & (y < H + PAD) & (x >= PAD) & (x < W + PAD),
        Data[n, c, y - PAD, x - PAD],
        0.0,
    ),
    name="Pad",
)
rc = ts.reduce_axis((0, CI), name="rc")
ry = ts.reduce_axis((0, KH), name="ry")
rx = ts.reduce_axis((0, KW), name="rx")
Conv = ts.compute(
    (BATCH, CO, H, W),
    lambda n, f, y, x: ts.sum(Pad[n, rc, y + ry, x + rx] * Kernel[f, rc, ry, rx], axis=[rc, ry, rx]),
    name="Conv",
)
args = [Data, Kernel, Conv]
assert ts.flop_count(Conv) == FLOPS

# The numpy reference: a sum of KH * KW shifted matrix products.
rng = np.random.default_rng(0)
data = rng.standard_normal((BATCH, CI, H, W)).astype("float32")
kernel = rng.standard_normal((CO, CI, KH, KW)).astype("float32")
padded = np.pad(data, ((0, 0), (0, 0), (PAD, PAD), (PAD, PAD)))
expected = sum(
    np.einsum("nchw,fc->nfhw", padded[:, :, dy:dy + H, dx:dx + W], kernel[:, :, dy, dx])
    for dy in range(KH)
    for dx in range(KW)
)

if "llvm" not in ts.targets():
    print(ts.lower(ts.create_schedule(Conv), args))
    print("this tessel was built without the LLVM backend: nothing to run")
    sys.exit(0)


def evaluate(step, s):
    f = ts.build(s, args)
    out = np.zeros((BATCH, CO, H, W), "float32")
    f(data, kernel, out)
    np.testing.assert_allclose(out, expected, rtol=1e-3, atol=1e-3)
    t = f.time_evaluator(min_repeats=3, min_total_seconds=0.0 if SMALL else 0.2)(data, kernel, out).median
    print(f"{step:<28} {FLOPS / t / 1e9:8.2f} GFLOP/s  (correct)")


# ---------------------------------------------------------------------------------------------
# Step 0: the default schedule: the padded input is materialised, then a 7-deep loop nest.
evaluate("0 default", ts.create_schedule(Conv))

# ---------------------------------------------------------------------------------------------
# Step 1: inline the padding. No padded copy: the condition moves into the convolution's loads.
s = ts.create_schedule(Conv)
s[Pad].compute_inline()
evaluate("1 inline padding", s)

# ---------------------------------------------------------------------------------------------
# Step 2: tile and vectorise. Tile the image (y, x) so a block of outputs stays in registers and
# cache, move the reduction loops outside the tile, and vectorise along x (contiguous in Conv
# and in Data).
TY, TX = (2, 7) if SMALL else (4, 8)
s = ts.create_schedule(Conv)
s[Pad].compute_inline()
n, f, y, x = Conv.op.axis
yo, xo, yi, xi = s[Conv].tile(y, x, TY, TX)
s[Conv].reorder(n, f, yo, xo, rc, ry, rx, yi, xi)
s[Conv].vectorize(xi)
s[Conv].unroll(rx)
evaluate("2 tile + vectorize", s)

# ---------------------------------------------------------------------------------------------
# Step 3: parallelise. Every (image, output channel) pair is independent: fuse the two loops and
# spread them over the cores.
nf = s[Conv].fuse(n, f)
s[Conv].parallel(nf)
evaluate("3 parallel", s)
print(ts.lower(s, args))

# The whole schedule is replayable data:
scope = {}
exec(s.to_python(), scope)
again = ts.create_schedule(Conv)
scope["apply_schedule"](again)
assert str(ts.lower(again, args)) == str(ts.lower(s, args))
