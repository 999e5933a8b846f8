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

Each step is checked at a small size in tessel's loop interpreter (SPMD, with its race detector)
and compiled by NVRTC; on a machine with a GPU it runs at full size against numpy.
benchmarks/softmax_cuda.py measures step 2 against torch.softmax.

Run:  python tutorials/06_gpu_softmax.py [--small]
"""
import sys
import time

import numpy as np

import tessel as ts

SMALL = "--small" in sys.argv
HAVE_GPU = ts.cuda_available()
ROWS_CHECK, COLS_CHECK = 4, 2048
ROWS, COLS = (1024, 8192) if SMALL else (8192, 8192)
THREADS = 512


def softmax(n, m):
    X = ts.placeholder((n, m), name="X")
    k1 = ts.reduce_axis((0, m), name="k1")
    k2 = ts.reduce_axis((0, m), name="k2")
    M = ts.compute((n,), lambda i: ts.max(X[i, k1], axis=k1), name="M")
    E = ts.compute((n, m), lambda i, j: ts.exp(X[i, j] - M[i]), name="E")
    S = ts.compute((n,), lambda i: ts.sum(E[i, k2], axis=k2), name="S")
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


def numpy_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def check_in_interpreter(make):
    s, args = make(ROWS_CHECK, COLS_CHECK)
    x = np.random.default_rng(1).standard_normal((ROWS_CHECK, COLS_CHECK)).astype("float32")
    y = np.full_like(x, np.nan)
    ts.lower(s, args).run(x, y)
    np.testing.assert_allclose(y, numpy_softmax(x), rtol=1e-5, atol=1e-7)


def run_on_gpu(make):
    s, args = make(ROWS, COLS)
    f = ts.build(s, args, target="cuda")
    x = np.random.default_rng(2).standard_normal((ROWS, COLS)).astype("float32")
    dx = ts.nd.array(x, device=ts.cuda(0))
    dy = ts.nd.array(np.full_like(x, np.nan), device=ts.cuda(0))
    f(dx, dy)
    np.testing.assert_allclose(dy.numpy(), numpy_softmax(x), rtol=1e-5, atol=1e-7)
    times = []
    for _ in range(20):
        t0 = time.perf_counter()
        f(dx, dy)
        ts.cuda_synchronize(0)
        times.append(time.perf_counter() - t0)
    return 2 * x.nbytes / np.median(times) / 1e9


STEPS = [("1. one block per row, cross-thread reductions", step1),
         ("2. the row in shared memory, 128-bit accesses", step2)]

if __name__ == "__main__":
    for title, make in STEPS:
        check_in_interpreter(make)
        s, args = make(ROWS, COLS)
        module = ts.build(s, args, target="cuda -arch=sm_90")
        assert "__shfl_xor_sync" in module.get_source("cu")
        if HAVE_GPU:
            print(f"{title}: correct, {run_on_gpu(make):7.1f} GB/s at {ROWS}x{COLS}")
        else:
            print(f"{title}: correct in the interpreter, compiles for sm_90 (no GPU here)")
