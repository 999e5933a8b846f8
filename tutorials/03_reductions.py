"""Tutorial 3: reductions.

A reduction combines values over one or more *reduce axes*: ts.sum, ts.max, ts.min, ts.prod,
ts.argmax / ts.argmin, and reducers of your own with ts.comm_reducer. This tutorial declares
them, shows how a reduction is lowered (an init statement, then an update loop), and schedules
reductions for the CPU: splitting the reduce axis, choosing which loop is innermost so that
vectorisation applies, and parallelising over the independent outputs.

The last section parallelises and vectorises *one* long reduction with rfactor: the reduction is
factored into independent partial results (a new stage) and a small reduction of those.

Run:  python tutorials/03_reductions.py [--small]
"""
import sys

import numpy as np

import tessel as ts

SMALL = "--small" in sys.argv
R, C = (32, 48) if SMALL else (1024, 2048)
HAVE_LLVM = "llvm" in ts.targets()
rng = np.random.default_rng(0)
x = rng.standard_normal((R, C)).astype("float32")


def run(s, args, inputs):
    """Builds the schedule and returns its outputs for the numpy inputs."""
    outs = [np.zeros([int(d) for d in t.shape], t.dtype) for t in args[len(inputs):]]
    ts.build(s, args)(*inputs, *outs)
    return outs


# ---------------------------------------------------------------------------------------------
# 1. Row sums: a reduce axis, and what lowering makes of it
#
# ts.reduce_axis((0, C)) is a loop over [0, C) that exists only inside the reduction. The lowered
# IR initialises each output with the reducer's identity (0 for sum), then accumulates.
X = ts.placeholder((R, C), name="X")
k = ts.reduce_axis((0, C), name="k")
row_sum = ts.compute((R,), lambda i: ts.sum(X[i, k], axis=k), name="row_sum")
s = ts.create_schedule(row_sum)
print(ts.lower(s, [X, row_sum]))

# The rows are independent: parallelise over them. The reduce axis itself cannot be parallel or
# vectorized (that would race on the accumulator): tessel says so at the call.
s[row_sum].parallel(row_sum.op.axis[0])
try:
    s[row_sum].vectorize(k)
except ts.ScheduleError as e:
    print("as expected:", str(e).splitlines()[0])
if HAVE_LLVM:
    (got,) = run(s, [X, row_sum], [x])
    np.testing.assert_allclose(got, x.sum(axis=1), rtol=1e-4, atol=1e-4)
    print("row sums: correct")

# ---------------------------------------------------------------------------------------------
# 2. Column sums: put the reduction outside, the contiguous axis inside
#
# For column sums the reduce axis walks down a column (stride C). Reordering so that the reduce
# loop is *outside* the spatial j loop makes the innermost loop contiguous, and it can be
# vectorized: each vector lane accumulates its own column.
r = ts.reduce_axis((0, R), name="r")
col_sum = ts.compute((C,), lambda j: ts.sum(X[r, j], axis=r), name="col_sum")
s = ts.create_schedule(col_sum)
jo, ji = s[col_sum].split(col_sum.op.axis[0], factor=16)
s[col_sum].reorder(jo, r, ji)
s[col_sum].vectorize(ji)
s[col_sum].parallel(jo)
print(ts.lower(s, [X, col_sum]))
if HAVE_LLVM:
    (got,) = run(s, [X, col_sum], [x])
    np.testing.assert_allclose(got, x.sum(axis=0), rtol=1e-4, atol=1e-4)
    print("column sums: correct")

# ---------------------------------------------------------------------------------------------
# 3. Splitting a reduce axis
#
# A reduce axis splits like any loop. Here the row reduction is done in chunks of 8 with the
# chunk loop unrolled: fewer loop branches, more independent work per iteration.
k = ts.reduce_axis((0, C), name="k")
row_max = ts.compute((R,), lambda i: ts.max(X[i, k], axis=k), name="row_max")
s = ts.create_schedule(row_max)
ko, ki = s[row_max].split(k, factor=8)
s[row_max].unroll(ki)
s[row_max].parallel(row_max.op.axis[0])
if HAVE_LLVM:
    (got,) = run(s, [X, row_max], [x])
    np.testing.assert_array_equal(got, x.max(axis=1))
    print("row maxima: correct")

# ---------------------------------------------------------------------------------------------
# 4. Multi-stage reductions: a numerically stable softmax
#
# softmax(x)_ij = exp(x_ij - max_j x_ij) / sum_j exp(x_ij - max_j x_ij): two reductions and two
# element-wise stages. compute_at puts each stage inside a loop of a stage that reads it (its
# consumer), so a row is reduced while it is still in cache: ex and den inside softmax's row
# loop, mx inside ex's row loop.
k1 = ts.reduce_axis((0, C), name="k1")
k2 = ts.reduce_axis((0, C), name="k2")
mx = ts.compute((R,), lambda i: ts.max(X[i, k1], axis=k1), name="mx")
ex = ts.compute((R, C), lambda i, j: ts.exp(X[i, j] - mx[i]), name="ex")
den = ts.compute((R,), lambda i: ts.sum(ex[i, k2], axis=k2), name="den")
sm = ts.compute((R, C), lambda i, j: ex[i, j] / den[i], name="softmax")
s = ts.create_schedule(sm)
row = sm.op.axis[0]
s[den].compute_at(s[sm], row)  # den first: ex's consumers must be placed before ex
s[ex].compute_at(s[sm], row)
s[mx].compute_at(s[ex], ex.op.axis[0])
s[sm].parallel(row)
if HAVE_LLVM:
    (got,) = run(s, [X, sm], [x])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-6)
    print("softmax: correct")

# ---------------------------------------------------------------------------------------------
# 5. Reducers of your own, and arg-max
#
# ts.comm_reducer(combine, identity) makes a reducer from a commutative, associative combine
# function and the identity for a dtype. A reducer may combine several values at once: here the
# sum of squares and the count of positive values in one pass. ts.argmax returns the (index,
# value) pair of a two-value reducer: return both from the lambda to get two outputs.
sum_sq_pos = ts.comm_reducer(
    lambda a, b: (a[0] + b[0], a[1] + b[1]), lambda t0, t1: (0.0, 0.0), name="sum_sq_pos"
)
k = ts.reduce_axis((0, C), name="k")
sq, pos = ts.compute(
    (R,),
    lambda i: sum_sq_pos((X[i, k] * X[i, k], ts.select(X[i, k] > 0, 1.0, 0.0)), axis=k),
    name="stats",
)
k = ts.reduce_axis((0, C), name="k")
idx, val = ts.compute((R,), lambda i: ts.argmax(k.var, X[i, k], axis=k), name="argmax")
if HAVE_LLVM:
    got_sq, got_pos = run(ts.create_schedule([sq, pos]), [X, sq, pos], [x])
    np.testing.assert_allclose(got_sq, (x * x).sum(axis=1), rtol=1e-4)
    np.testing.assert_array_equal(got_pos, (x > 0).sum(axis=1))
    got_idx, got_val = run(ts.create_schedule([idx, val]), [X, idx, val], [x])
    np.testing.assert_array_equal(got_idx, x.argmax(axis=1))
    np.testing.assert_array_equal(got_val, x.max(axis=1))
    print("user reducer and argmax: correct")

# ---------------------------------------------------------------------------------------------
# 6. rfactor: one long reduction, in parallel and in vector lanes
#
# The sum of a whole vector has one output, so there is no data-parallel loop to parallelise, and
# its reduction loop may be neither parallel nor vectorized. s.rfactor(T, loop) factors T's
# reduction over one part of a split reduce axis into a new stage of *partial results* in which
# that loop is data-parallel, and T then reduces the partial results. It returns the new stage's
# tensor (it inserts a stage, so stage indices shift; s[T] and the returned tensor stay valid).
N = R * C
V = ts.placeholder((N,), name="V")
v = x.reshape(-1)
k = ts.reduce_axis((0, N), name="k")
total = ts.compute((1,), lambda _: ts.sum(V[k], axis=k), name="total")

# 6a. Parallel chunks: split k into 8 contiguous chunks, one partial sum per chunk.
s = ts.create_schedule(total)
ko, ki = s[total].split(k, nparts=8)
try:
    s[total].parallel(ko)
except ts.ScheduleError as e:
    print("as expected:", str(e).splitlines()[0])
partial = s.rfactor(total, ko)  # partial[c, 0] = sum of chunk c; total[0] = sum over c
print("stages:", [st.name for st in s.stages], "partial sums:", partial.shape)
s[partial].parallel(s[partial].op.axis[0])
print(ts.lower(s, [V, total]))
if HAVE_LLVM:
    (got,) = run(s, [V, total], [v])
    np.testing.assert_allclose(got, [v.sum(dtype="float64")], rtol=1e-4, atol=1e-2)
    print("parallel sum: correct")

# 6b. Vector lanes: split k by 16 and factor over the inner part. Each of the 16 lanes sums every
# 16th element; with the lane loop innermost it vectorizes, and total adds the 16 lanes at the end.
# factor_axis says where the new dimension goes among the partial results' dimensions.
s = ts.create_schedule(total)
ko, ki = s[total].split(k, factor=16)
lanes = s.rfactor(total, ki, factor_axis=1)  # lanes[0, l] = sum of V[16 * j + l] over j
lane = s[lanes].op.axis[1]
(rest,) = s[lanes].op.reduce_axis
s[lanes].reorder(rest, lane)
s[lanes].vectorize(lane)
print(s.to_python())  # the index form: s.rfactor(1, 2, 1) and what follows
if HAVE_LLVM:
    (got,) = run(s, [V, total], [v])
    np.testing.assert_allclose(got, [v.sum(dtype="float64")], rtol=1e-4, atol=1e-2)
    print("vectorized sum: correct")
