"""Tutorial 2: optimising matrix multiplication on a CPU, step by step.

This follows TVM's classic "How to optimize GEMM on CPU": start from the naive triple loop and
improve memory access step by step, measuring GFLOP/s after each step beside numpy's matmul
(which calls an optimised BLAS). Every step is checked against numpy.

    C[i, j] = sum_k A[i, k] * B[k, j]

Run:  python tutorials/02_cpu_gemm.py [--small]
(The caching step of the TVM tutorial, cache_write, arrives with a later tessel release.)
"""
import sys
import time

import numpy as np

import tessel as ts

SMALL = "--small" in sys.argv
M = N = K = 64 if SMALL else 512
BN = 16 if SMALL else 32  # the block size: a BN x BN tile of C stays in cache
KFACTOR = 4

if "llvm" not in ts.targets():
    print("this tessel was built without the LLVM backend: nothing to run")
    sys.exit(0)

rng = np.random.default_rng(0)
a = rng.standard_normal((M, K)).astype("float32")
b = rng.standard_normal((K, N)).astype("float32")
expected = a @ b
flops = 2.0 * M * N * K
repeats = dict(min_repeats=3, min_total_seconds=0.0 if SMALL else 0.2)


def numpy_gflops():
    a @ b  # warm up
    times = []
    for _ in range(5 if SMALL else 20):
        t0 = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t0)
    return flops / sorted(times)[len(times) // 2] / 1e9


NUMPY = numpy_gflops()


def evaluate(step, s, args):
    """Builds, checks against numpy and prints the GFLOP/s of one schedule."""
    f = ts.build(s, args, target="llvm")
    c = np.zeros((M, N), "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, expected, rtol=1e-3, atol=1e-3)
    t = f.time_evaluator(**repeats)(a, b, c).median
    print(f"{step:<22} {flops / t / 1e9:8.2f} GFLOP/s   (numpy matmul {NUMPY:8.2f} GFLOP/s)")
    return s


def declare():
    A = ts.placeholder((M, K), name="A")
    B = ts.placeholder((K, N), name="B")
    k = ts.reduce_axis((0, K), name="k")
    C = ts.compute((M, N), lambda i, j: ts.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C


# ---------------------------------------------------------------------------------------------
# Step 0: the default schedule, a plain triple loop. B is read column-wise in the inner loop: for
# large matrices nearly every access misses the cache.
A, B, C = declare()
s = ts.create_schedule(C)
evaluate("0 default", s, [A, B, C])

# ---------------------------------------------------------------------------------------------
# Step 1: blocking. Tile the (i, j) loops into BN x BN blocks, so a block of C and the rows and
# columns it needs stay in cache; split k too.
A, B, C = declare()
s = ts.create_schedule(C)
io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], BN, BN)
ko, ki = s[C].split(C.op.reduce_axis[0], factor=KFACTOR)
s[C].reorder(io, jo, ko, ki, ii, ji)
evaluate("1 blocking", s, [A, B, C])

# ---------------------------------------------------------------------------------------------
# Step 2: vectorisation. The innermost loop ji walks along a row of B and of C: contiguous
# memory, a constant extent. vectorize() turns it into SIMD instructions.
s[C].vectorize(ji)
evaluate("2 vectorize", s, [A, B, C])

# ---------------------------------------------------------------------------------------------
# Step 3: loop permutation. With ki outside ii, each ii iteration touches a different row of A
# and C; moving ki inside keeps one row of C in registers while k advances.
A, B, C = declare()
s = ts.create_schedule(C)
io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], BN, BN)
ko, ki = s[C].split(C.op.reduce_axis[0], factor=KFACTOR)
s[C].reorder(io, jo, ko, ii, ki, ji)
s[C].vectorize(ji)
evaluate("3 loop permutation", s, [A, B, C])

# ---------------------------------------------------------------------------------------------
# Step 4: array packing. A BN-wide column block of B is strided in memory (rows N apart). Packing
# B into [N / BN][K][BN] makes the block contiguous. The packing is just another compute: the
# tensor-expression language expresses layout changes too.
A = ts.placeholder((M, K), name="A")
B = ts.placeholder((K, N), name="B")
k = ts.reduce_axis((0, K), name="k")
packedB = ts.compute((N // BN, K, BN), lambda x, y, z: B[y, x * BN + z], name="packedB")
C = ts.compute(
    (M, N), lambda i, j: ts.sum(A[i, k] * packedB[j // BN, k, j % BN], axis=k), name="C"
)
s = ts.create_schedule(C)
io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], BN, BN)
ko, ki = s[C].split(C.op.reduce_axis[0], factor=KFACTOR)
s[C].reorder(io, jo, ko, ii, ki, ji)
s[C].vectorize(ji)
x, y, z = packedB.op.axis
s[packedB].vectorize(z)
evaluate("4 array packing", s, [A, B, C])

# ---------------------------------------------------------------------------------------------
# Step 5: parallelism. The row blocks io are independent: run them on every core (the thread
# pool's size is TESSEL_NUM_THREADS, by default the number of cores), and pack B in parallel.
s[C].parallel(io)
s[packedB].parallel(x)
evaluate("5 parallel", s, [A, B, C])

print()
print("The final schedule, as a script that replays it:")
print(s.to_python())
