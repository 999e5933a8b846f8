"""Tutorial 6: reductions on an NVIDIA GPU: a row softmax.

    M[i] = max_j X[i, j]          E[i, j] = exp(X[i, j] - M[i])
    S[i] = sum_j E[i, j]          Y[i, j] = E[i, j] / S[i]

Softmax is bound by memory: the fastest kernel reads X once and writes Y once. The schedule gives
each row to one thread block and computes every stage at the row, so nothing but Y goes back to
global memory:

  1. one block per row: the threads split the row; the row maximum and the row sum are
     cross-thread reductions (a reduce axis bound to threadIdx.x: tessel combines the threads'
     partial results with warp shuffles and shared memory), E is inlined;
  2. the row in shared memory: X's row is loaded once, 128 bits per thread access
     (cache_read to "shared", vectorize), and the max, the sum and the output read it from there.
     On long rows this need not beat step 1, and on the H100 it did not: see the step's comment;
  3. short rows (1000 floats): a warp per row, several rows per block, the reductions within a
     warp (shuffles only, no barrier after them), the block's rows read once into shared memory;
  4. one division per row instead of one per element, and the row loops unrolled.

Each step is checked at a small size in tessel's loop interpreter (SPMD, with its race detector)
and compiled by NVRTC; on a machine with a GPU it runs against numpy at 8192 x 8192 (long rows)
and 4096 x 1000 (short rows). benchmarks/softmax_cuda.py measures best() (step 4 for rows up to
2048 floats, step 2 for longer ones) against torch.softmax; its --variants option times every
step.

Run:  python tutorials/06_gpu_softmax.py [--small]
"""
import sys
import time

import numpy as np

import tessel as ts

SMALL = "--small" in sys.argv
HAVE_GPU = ts.cuda_available()
CHECK = (4, 2048)  # rows and columns checked in the interpreter
ROWS, COLS = (1024, 8192) if SMALL else (8192, 8192)
SHORT_ROWS, SHORT_COLS = (1024, 1000) if SMALL else (4096, 1000)
THREADS = 512


def softmax(n, m, reciprocal=False):
    """The four stages; `reciprocal`: Y = E * (1 / S[i]), one division per row instead of one per
    element (within a rounding of E / S)."""
    X = ts.placeholder((n, m), name="X")
    k1 = ts.reduce_axis((0, m), name="k1")
    k2 = ts.reduce_axis((0, m), name="k2")
    M = ts.compute((n,), lambda i: ts.max(X[i, k1], axis=k1), name="M")
    E = ts.compute((n, m), lambda i, j: ts.exp(X[i, j] - M[i]), name="E")
    S = ts.compute((n,), lambda i: ts.sum(E[i, k2], axis=k2), name="S")
    if reciprocal:
        Y = ts.compute((n, m), lambda i, j: E[i, j] * (1.0 / S[i]), name="Y")
    else:
        Y = ts.compute((n, m), lambda i, j: E[i, j] / S[i], name="Y")
    return X, M, E, S, Y


def one_block_per_row(s, X, M, E, S, Y, vector):
    """Y's rows on blocks, its columns over THREADS threads (`vector` consecutive columns per
    access); M and S computed at the row as cross-thread reductions into shared memory."""
    s[E].compute_inline()
    row, col = Y.op.axis
    s[Y].bind(row, "blockIdx.x")
    col, v = s[Y].split(col, factor=vector)
    _, tx = s[Y].split(col, factor=THREADS)
    s[Y].bind(tx, "threadIdx.x")
    if vector > 1:
        s[Y].vectorize(v)
    for T in (S, M):  # S first: M is read by S too
        s[T].compute_at(s[Y], row)
        s[T].set_scope("shared")
        (k,) = T.op.reduce_axis
        _, ki = s[T].split(k, factor=THREADS)
        s[T].bind(ki, "threadIdx.x")


# ---------------------------------------------------------------------------------------------
# 1. One block per row, cross-thread reductions
def step1(n, m):
    X, M, E, S, Y = softmax(n, m)
    s = ts.create_schedule(Y)
    one_block_per_row(s, X, M, E, S, Y, vector=1)
    return s, [X, Y]


# ---------------------------------------------------------------------------------------------
# 2. The row in shared memory, 128-bit loads and stores
#
# X's row (m floats: 32 KB at m = 8192) is copied into shared memory once, 4 floats per thread
# access; the three passes over the row (max, sum, output) then read shared memory.
#
# Why this step may be slower than step 1 (it was on the H100 at 8192 x 8192): step 1 reads the
# row three times, but only the first read comes from DRAM. A block of step 1 uses no shared
# memory, so the SM's L1 cache (up to 256 KB) keeps its 32 KB row between the passes, and the
# second and third reads hit it. Staging the row in shared memory saves no DRAM traffic then, and
# it costs: a store and three shared loads per element, and a barrier after the copy, so a block
# computes nothing until its whole row has arrived (in step 1 the max pass starts on the first
# loads). What step 2 does guarantee is one read of the row whatever the cache keeps; it is the
# pattern step 3 uses for short rows, where one block holds several rows. Time both on your GPU
# (benchmarks/softmax_cuda.py --variants) before choosing.
def step2(n, m):
    X, M, E, S, Y = softmax(n, m)
    s = ts.create_schedule(Y)
    XS = s.cache_read(X, "shared", [M, E])
    one_block_per_row(s, X, M, E, S, Y, vector=4)
    s[XS].compute_at(s[Y], Y.op.axis[0])
    _, col = XS.op.axis
    col, v = s[XS].split(col, factor=4)
    _, tx = s[XS].split(col, factor=THREADS)
    s[XS].bind(tx, "threadIdx.x")
    s[XS].vectorize(v)
    return s, [X, Y]


# ---------------------------------------------------------------------------------------------
# 3. Short rows: a warp per row
#
# A block of 512 threads on a row of 1000 floats leaves most threads idle for most of the row
# (two columns each) and pays two block-wide reductions per row. With short rows one warp (32
# threads) reduces a row: threadIdx.x runs along the row, threadIdx.y picks one of the block's
# ROWS_PER_BLOCK rows. The cross-thread reductions then stay inside a warp: shuffles only, no
# shared memory and no __syncthreads() after them. M and S live in registers ("local" scope:
# every thread of the warp keeps its own copy of the row's max and sum), and the block's rows are
# read from global memory once, 128 bits per thread access, into shared memory (8 rows of 1000
# floats: 32 KB), from which the max, the sum and the output read them.
ROWS_PER_BLOCK = 8
WARP = 32


def vector_width(m):
    """Floats per access: 4 (128 bits) where every row starts 16-byte aligned, else 2 or 1."""
    return 4 if m % 4 == 0 else 2 if m % 2 == 0 else 1


def along_row(stage, col, vector, unroll):
    """A row's loop on a warp: `vector` consecutive floats per lane access, 32 lanes on
    threadIdx.x, the steps of the warp along the row unrolled when `unroll`."""
    col, v = stage.split(col, factor=vector)
    steps, lane = stage.split(col, factor=WARP)
    stage.bind(lane, "threadIdx.x")
    if vector > 1:
        stage.vectorize(v)
    if unroll:
        stage.unroll(steps)


def step3(n, m, rows_per_block=ROWS_PER_BLOCK, shared=True, exp_once=False, unroll=False,
          reciprocal=False):
    """`shared=False` leaves X in global memory: the three passes read it there (the second and
    third from the L1 cache, if it holds the rows), with no shared memory and no barrier.
    `exp_once`: E = exp(X - M) is stored in shared memory next to X's rows (the sum and the
    output read it) instead of being computed again by each of them. `unroll`: the loops along
    the row (a warp's steps of 32 accesses) are unrolled, so a warp has all its loads of the row
    in flight at once instead of one step's. `reciprocal`: see softmax()."""
    X, M, E, S, Y = softmax(n, m, reciprocal)
    s = ts.create_schedule(Y)
    # At most 32 KB of shared memory per block (several blocks per multiprocessor), at least a
    # row; with E stored too, half the rows.
    rows_per_block = max(1, min(rows_per_block, n, (4096 if exp_once else 8192) // m))
    vector = vector_width(m)
    XS = s.cache_read(X, "shared", [M, E]) if shared else None
    if not (exp_once and shared):
        s[E].compute_inline()
    row, col = Y.op.axis
    block, warp = s[Y].split(row, factor=rows_per_block)
    s[Y].bind(block, "blockIdx.x")
    s[Y].bind(warp, "threadIdx.y")
    along_row(s[Y], col, vector, unroll)
    for T in (S, M):  # S first: M is read by S too
        s[T].compute_at(s[Y], warp)
        s[T].set_scope("local")
        (k,) = T.op.reduce_axis
        steps, lane = s[T].split(k, factor=WARP)
        s[T].bind(lane, "threadIdx.x")
        if unroll:
            s[T].unroll(steps)
    if not shared:
        return s, [X, Y]
    # The block's rows in shared memory, each filled by its warp (and E's, with exp_once).
    stored = [E, XS] if exp_once else [XS]
    for T in stored:
        s[T].compute_at(s[Y], warp)
        if T == E:
            s[E].set_scope("shared")
        r, c = T.op.axis
        s[T].bind(r, "threadIdx.y")
        along_row(s[T], c, vector, unroll)
    return s, [X, Y]


# ---------------------------------------------------------------------------------------------
# 4. What was left at 4096 x 1000: the division, and loads one step at a time
#
# Step 3 moves each byte once, yet on the H100 it stayed at 0.95 x torch.softmax at 4096 x 1000.
# Two things kept it there. Y = E / S divides every element, and an IEEE float division is a
# dozen instructions: with the row already in shared memory, that, not memory, was the limit.
# softmax(reciprocal=True) computes 1 / S once per row and multiplies (the result moves by at
# most a rounding). And the loops along the row ran one step of 32 accesses at a time; unrolled,
# a warp has all its loads of the row in flight at once. Together: 1.09 x torch.softmax.
def step4(n, m):
    return step3(n, m, unroll=True, reciprocal=True)


# Rows up to this length go to a warp each (step 4), longer ones to a block each (step 2, or step 1
# past SHARED_ROW_MAX).
SHARED_ROW_MAX = 49152
WARP_ROW_MAX = 2048


def best(n, m):
    """The schedule for an n x m softmax: a warp per row for short rows (its loops along the row
    unrolled, one division per row: on the H100 the per-element division, not memory, was what
    kept it under torch.softmax at 4096 x 1000), a block for long ones."""
    if m <= WARP_ROW_MAX:
        return step4(n, m)
    # Step 2's row must fit in a block's shared memory (227 KB on the H100); step 1 reads longer
    # rows from global memory.
    return step2(n, m) if m <= SHARED_ROW_MAX else step1(n, m)


def numpy_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def check_in_interpreter(make, n, m):
    s, args = make(n, m)
    x = np.random.default_rng(1).standard_normal((n, m)).astype("float32")
    y = np.full_like(x, np.nan)
    ts.lower(s, args).run(x, y)
    np.testing.assert_allclose(y, numpy_softmax(x), rtol=1e-5, atol=1e-7)


def run_on_gpu(make, n, m):
    s, args = make(n, m)
    f = ts.build(s, args, target="cuda")
    x = np.random.default_rng(2).standard_normal((n, m)).astype("float32")
    dx = ts.nd.array(x, device=ts.cuda(0))
    dy = ts.nd.array(np.full_like(x, np.nan), device=ts.cuda(0))
    f(dx, dy)
    np.testing.assert_allclose(dy.numpy(), numpy_softmax(x), rtol=1e-5, atol=1e-7)
    # 20 calls queued back to back, then one wait: a short kernel's time is then the GPU's, not
    # the time the host takes to launch it.
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(20):
            f(dx, dy)
        ts.cuda_synchronize(0)
        times.append((time.perf_counter() - t0) / 20)
    return 2 * x.nbytes / np.median(times) / 1e9


# Each step with the shapes it is run at: long rows (ROWS x COLS) and short ones (SHORT_ROWS x
# SHORT_COLS), and the shape it is checked at in the interpreter.
LONG, SHORT = (ROWS, COLS), (SHORT_ROWS, SHORT_COLS)
STEPS = [("1. one block per row, cross-thread reductions", step1, [LONG, SHORT], CHECK),
         ("2. the row in shared memory, 128-bit accesses", step2, [LONG, SHORT], CHECK),
         ("3. short rows: a warp per row", step3, [SHORT], (37, 1000)),
         ("4. unrolled row loops, one division per row", step4, [SHORT], (37, 1000))]

if __name__ == "__main__":
    for title, make, shapes, check in STEPS:
        check_in_interpreter(make, *check)
        for n, m in shapes:
            s, args = make(n, m)
            module = ts.build(s, args, target="cuda -arch=sm_90")
            assert "__shfl_xor_sync" in module.get_source("cu")
            if HAVE_GPU:
                print(f"{title}: correct, {run_on_gpu(make, n, m):7.1f} GB/s at {n}x{m}")
        if not HAVE_GPU:
            print(f"{title}: correct in the interpreter, compiles for sm_90 (no GPU here)")
