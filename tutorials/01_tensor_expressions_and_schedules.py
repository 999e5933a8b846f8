"""Tutorial 1: tensor expressions and schedules.

tessel separates *what* to compute from *how* to compute it:

* the **tensor-expression DSL** (``ts.placeholder``, ``ts.compute``, ``ts.reduce_axis``) declares
  the result of every tensor as a function of indices;
* a **schedule** (``ts.create_schedule``) says how to loop over those indices: split, reorder,
  tile, fuse, vectorize, unroll, parallelise, and where each intermediate tensor is computed.

Every schedule primitive is recorded as a replayable *step*, so a schedule can be printed as a
Python script (``s.to_python()``) or stored as JSON (``s.to_json()``).

Coming from TVM (<= 0.19)? A tensor-expression script runs on tessel with its imports changed:
``import tessel as tvm`` and ``from tessel import te``; then ``te.compute``, ``te.create_schedule(C.op)``,
``s[C].split``/``tile``/``compute_at``/``bind(loop, te.thread_axis("threadIdx.x"))``,
``tvm.lower(s, args, simple_mode=True)``, ``tvm.build``, ``tvm.nd.array(x, dev)`` and
``f.time_evaluator(f.entry_name, dev, number=10)`` are tessel's own functions under TVM's names.
docs/tvm.md lists every TE function and schedule method with what differs.

Run:  python tutorials/01_tensor_expressions_and_schedules.py [--small]
"""
import sys

import numpy as np

import tessel as ts

SMALL = "--small" in sys.argv
N = 64 if SMALL else 1024

# ---------------------------------------------------------------------------------------------
# 1. Declaring a computation
#
# A placeholder is an input: a shape, a dtype and a name. A compute declares an output by a
# Python function of its indices. The function is called *once*, when ts.compute is called, with
# symbolic index variables: tessel traces it into an expression tree. Nothing is computed yet.
A = ts.placeholder((N,), name="A")
B = ts.placeholder((N,), name="B")
C = ts.compute((N,), lambda i: A[i] * 2.0 + B[i], name="C")
print("C is", C, "with body", C.op.body[0])

# Because the lambda is traced, Python control flow on symbolic values cannot work: `if A[i] > 0`
# would have to decide at trace time. tessel refuses it loudly (a DSLError, a TypeError) and
# offers symbolic alternatives: ts.if_then_else / ts.select, & | ~, ts.max / ts.min.
try:
    ts.compute((N,), lambda i: A[i] if A[i] > 0 else 0.0, name="relu")
    raise AssertionError("expected a DSLError")
except ts.DSLError as e:
    print("as expected:", str(e).split(".")[0])
relu = ts.compute((N,), lambda i: ts.max(A[i], 0.0), name="relu")

# ---------------------------------------------------------------------------------------------
# 2. The default schedule, lowered
#
# A fresh schedule computes every tensor in its own loop nest, in order. ts.lower shows the loop
# IR that a schedule produces: this is what the code generator compiles.
s = ts.create_schedule(C)
print(ts.lower(s, [A, B, C]))

# ---------------------------------------------------------------------------------------------
# 3. Loop transformations
#
# s[C] is C's stage. C.op.axis lists its loops (one per dimension). split() returns two new loops;
# vectorize() asks for SIMD code for a loop with a constant extent; parallel() spreads a loop over
# the CPU's threads. Each primitive is checked when it is called: a mistake raises a ScheduleError
# that names the primitive, the stage and the loop, and shows the loop nest.
outer, inner = s[C].split(C.op.axis[0], factor=16)
s[C].vectorize(inner)
s[C].parallel(outer)
print(ts.lower(s, [A, B, C]))
try:
    s[C].split(C.op.axis[0], factor=4)  # i was split already: it is no longer a loop
except ts.ScheduleError as e:
    print("as expected:", str(e).splitlines()[0])

# ---------------------------------------------------------------------------------------------
# 4. Building and running
#
# ts.build compiles the schedule with LLVM for this CPU. The module is callable with tessel
# NDArrays or numpy arrays (wrapped without copying when their layout allows).
if "llvm" in ts.targets():
    f = ts.build(s, [A, B, C], target="llvm")
    a = np.random.rand(N).astype("float32")
    b = np.random.rand(N).astype("float32")
    c = np.zeros(N, "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a * 2 + b, rtol=1e-6)
    print("C = 2A + B: correct")

# ---------------------------------------------------------------------------------------------
# 5. Several stages: compute_at and compute_inline
#
# D reads an intermediate T. By default T is computed completely before D (a buffer of M * M
# elements). compute_inline substitutes T into D (no buffer at all); compute_at computes the part
# of T that one iteration of a D loop needs, inside that loop (a small buffer, good locality).
M = 16 if SMALL else 256
X = ts.placeholder((M, M), name="X")
T = ts.compute((M, M), lambda i, j: ts.exp(X[i, j]), name="T")
D = ts.compute((M, M), lambda i, j: T[i, j] * T[i, j] + 1.0, name="D")
s2 = ts.create_schedule(D)
rows, _ = s2[D].split(D.op.axis[0], factor=4)
s2[T].compute_at(s2[D], rows)
print(ts.lower(s2, [X, D]))
if "llvm" in ts.targets():
    x = np.random.rand(M, M).astype("float32")
    d = np.zeros((M, M), "float32")
    ts.build(s2, [X, D])(x, d)
    np.testing.assert_allclose(d, np.exp(x) ** 2 + 1, rtol=1e-5)
    print("D with T computed at D's row blocks: correct")

# ---------------------------------------------------------------------------------------------
# 6. Schedules are data
#
# to_python() prints the recorded steps as a script; running it on a fresh schedule of the same
# DAG replays them exactly (the same lowered IR). to_json() is what tuning records store.
script = s2.to_python()
print(script)
scope = {}
exec(script, scope)
replayed = ts.create_schedule(D)
scope["apply_schedule"](replayed)
assert str(ts.lower(replayed, [X, D])) == str(ts.lower(s2, [X, D]))
assert ts.schedule_from_json(D, s2.to_json()).to_json() == s2.to_json()
print("to_python() and to_json() replay the schedule exactly")
