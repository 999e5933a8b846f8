"""Tutorial 2: optimising matrix multiplication on a CPU, step by step.

This follows TVM's classic "How to optimize GEMM on CPU": start from the naive triple loop and
improve memory access step by step, measuring GFLOP/s after each step beside numpy's matmul
(which calls an optimised BLAS). Every step is checked against numpy.

    C[i, j] = sum_k A[i, k] * B[k, j]

Run:  python tutorials/02_cpu_gemm.py [--small]
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
    # tuning_logs=False: step 0 is the loop nest as written. A schedule without steps is
    # otherwise tessel's to choose, and the tuning logs shipped with tessel hold this GEMM.
    f = ts.build(s, args, target="llvm", tuning_logs=False)
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
# B into [N / BN][K][BN] makes the block contiguous. Packing is a schedule decision, not a change
# of the computation: cache_read(B, "global", [C]) adds a stage that copies B and makes C read the
# copy; storage_split and storage_reorder lay the copy out in column panels. (TVM's tutorial
# declares packedB as a compute, B[y, x * BN + z], and C reads it: that works in tessel too.)
def pack_b(s, B, C, width=BN):
    packedB = s.cache_read(B, "global", [C])  # the copy's tensor: s[packedB] is its stage
    s[packedB].storage_split(1, width)  # [K][N / width][width]
    s[packedB].storage_reorder(1, 0, 2)  # [N / width][K][width]
    # Copy panel by panel, each row of a panel one vector store.
    y, x = s[packedB].op.axis
    xo, xi = s[packedB].split(x, factor=width)
    s[packedB].reorder(xo, y, xi)
    s[packedB].vectorize(xi)
    return packedB, xo


A, B, C = declare()
s = ts.create_schedule(C)
packedB, _ = pack_b(s, B, C)
io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], BN, BN)
ko, ki = s[C].split(C.op.reduce_axis[0], factor=KFACTOR)
s[C].reorder(io, jo, ko, ii, ki, ji)
s[C].vectorize(ji)
evaluate("4 array packing", s, [A, B, C])

# ---------------------------------------------------------------------------------------------
# Step 5: write cache. C's block is updated K times; accumulating it in a small buffer that stays
# in cache (and registers), then copying it out once, saves memory traffic. cache_write(C,
# "local") moves C's computation into a new stage C.local and leaves C a copy of it; it must come
# before C's loop transformations. C.local is computed per block of C (compute_at), with its own
# loops: s[CC].op.axis and .reduce_axis.
A, B, C = declare()
s = ts.create_schedule(C)
packedB, xo = pack_b(s, B, C)
CC = s.cache_write(C, "local")
io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], BN, BN)
s[CC].compute_at(s[C], jo)
mc, nc = s[CC].op.axis
(kc,) = s[CC].op.reduce_axis
ko, ki = s[CC].split(kc, factor=KFACTOR)
# C.local's loops are declared over all of C; at C's jo they cover one BN x BN block (lowering
# infers that region). vectorize checks the declared extent, so split the vector loop by BN: its
# outer part then runs once.
nco, nci = s[CC].split(nc, factor=BN)
s[CC].reorder(nco, ko, mc, ki, nci)
s[CC].unroll(ki)
s[CC].vectorize(nci)
s[C].vectorize(ji)
evaluate("5 write cache", s, [A, B, C])

# ---------------------------------------------------------------------------------------------
# Step 6: parallelism. The row blocks io are independent: run them on every core (the thread
# pool's size is TESSEL_NUM_THREADS, by default the number of cores), and pack B in parallel.
s[C].parallel(io)
s[packedB].parallel(xo)
evaluate("6 parallel", s, [A, B, C])

# ---------------------------------------------------------------------------------------------
# Step 7: sized for this CPU. The sizes above (BN = 32, KFACTOR = 4) were picked by hand for one
# machine; the target knows what they should follow (docs/target.md): the vector width, which
# with the register count sets the register tile, and the L2 size, which sets how many columns
# of packed B a block sweeps. This is the structure op.matmul's default schedule uses
# (docs/operators.md, "Matrix products on CPUs"):
#   - a tile of MR rows x NR columns (NR two vectors, MR as many rows as the registers hold beside
#     them) accumulated in a local buffer across all of K: LLVM keeps it in registers;
#   - column blocks of NP panels whose packed B (all of K) takes a quarter of L2, each block's B
#     packed when the block starts, by the core that then sweeps it;
#   - the blocks in parallel. Sizes need not divide M or N: the tails are guarded.
cpu = ts.Target("llvm")
LANES = cpu.vector_lanes("float32")
REGISTERS = 32 if LANES * 32 >= 512 else 16  # AVX-512 has 32 vector registers, AVX2 16
NR = 2 * LANES
MR = min(12, (REGISTERS - 3) // 2)
NP = max(1, min(8, cpu.l2_cache_bytes // 4 // (K * NR * 4)))
NP = max(1, min(NP, N // NR // (2 * cpu.num_cores)))  # at least two blocks a core
print(f"step 7 on this CPU ({cpu.describe()}): {MR} x {NR} tiles, {NP} panels a block")
A, B, C = declare()
s = ts.create_schedule(C)
packedB, _ = pack_b(s, B, C, NR)  # packed when each column block starts (compute_at below)
CC = s.cache_write(C, "local")
i, j = s[C].op.axis
io, ii = s[C].split(i, factor=MR)
jp, ji = s[C].split(j, factor=NR)
jo, jpi = s[C].split(jp, factor=NP)
s[C].reorder(jo, io, jpi, ii, ji)
s[C].vectorize(ji)
s[C].parallel(jo)
s[CC].compute_at(s[C], jpi)
ci, cj = s[CC].op.axis
(ck,) = s[CC].op.reduce_axis
s[CC].reorder(ck, ci, cj)
s[CC].unroll(ci)
s[CC].vectorize(cj)
s[packedB].compute_at(s[C], jo)
evaluate("7 sized for this CPU", s, [A, B, C])

print()
print("The final schedule, as a script that replays it:")
print(s.to_python())
