"""Tutorial 5: matrix multiplication on an NVIDIA GPU, step by step.

    C[i, j] = sum_k A[i, k] * B[k, j]        (float32, row-major n x n)

A GPU runs a grid of thread blocks; the threads of a block share fast on-chip memory ("shared"
scope) and can wait for each other at barriers; each thread has registers ("local" scope). A GPU
schedule says which loops become the grid (blockIdx) and the block (threadIdx), what is staged
through shared memory and registers, and how each thread's accesses are laid out. The steps:

  1. one thread per element of C: blocks of 16 x 16 threads;
  2. block tiling: a 64 x 64 tile of C per block, A's and B's tiles staged in shared memory,
     8 columns of k at a time (cache_read to "shared", compute_at the k loop), 4 x 4 per thread;
  3. virtual threads: the same tile, each thread's 4 x 4 results strided over the block (vthread),
     so that neighbouring threads read neighbouring words. This alone does not make the kernel
     faster (on the H100 it was slower than step 2): the step's comment says why;
  4. the register tile: 128 x 128 per block, 8 x 8 results per thread kept in registers
     (cache_write to "local", fully unrolled), A's tile stored transposed and padded in shared
     memory so that each thread reads its 8 values of A and of B with two 128-bit loads each
     (cache_read to "local", storage_reorder, storage_align), and global loads and stores
     vectorized to 128 bits.

Every step is checked: on any machine, at a small size, in tessel's loop interpreter (which runs
the kernels as SPMD programs and reports races between threads), and compiled by NVRTC for sm_90;
on a machine with a GPU, at full size on the GPU against numpy, with its GFLOP/s.
benchmarks/gemm_cuda.py measures step 4 against cuBLAS.

Run:  python tutorials/05_gpu_gemm.py [--small]
"""
import sys
import time

import numpy as np

import tessel as ts

SMALL = "--small" in sys.argv
HAVE_GPU = ts.cuda_available()
# The interpreter is slow: it checks each step at n = 128 (one or a few blocks).
N_CHECK = 128
N_RUN = 2048 if SMALL else 4096


def gemm(n):
    A = ts.placeholder((n, n), name="A")
    B = ts.placeholder((n, n), name="B")
    k = ts.reduce_axis((0, n), name="k")
    C = ts.compute((n, n), lambda i, j: ts.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C


# ---------------------------------------------------------------------------------------------
# 1. One thread per element
#
# Split both axes of C by 16 and bind: the outer loops become the grid, the inner ones the
# block's threads. Each thread loops over k reading A and B straight from global memory.
def step1(n):
    A, B, C = gemm(n)
    s = ts.create_schedule(C)
    i, j = C.op.axis
    bi, ti = s[C].split(i, factor=16)
    bj, tj = s[C].split(j, factor=16)
    s[C].reorder(bi, bj, ti, tj)
    s[C].bind(bi, "blockIdx.y")
    s[C].bind(bj, "blockIdx.x")
    s[C].bind(ti, "threadIdx.y")
    s[C].bind(tj, "threadIdx.x")
    return s, [A, B, C]


# ---------------------------------------------------------------------------------------------
# 2. Block tiling through shared memory
#
# Each block computes a 64 x 64 tile of C with 16 x 16 threads, 4 x 4 elements each. For every
# 8 columns of k (the k.outer loop) the block first copies the 64 x 8 tile of A and the 8 x 64
# tile of B into shared memory, all threads together (cache_read(..., "shared"), computed at
# k.outer, its loops bound to the threads), then every thread reads them from there: each element
# of A and B is read from global memory once per block instead of once per thread. tessel inserts
# the barriers between the copies and the reads itself.
def tile_c(s, C, block, threads, vthreads=1):
    """Blocks of block x block; threads x threads threads, each (block / threads)^2 elements,
    as vthreads x vthreads strided sub-tiles when vthreads > 1. Returns the thread loop tx."""
    i, j = C.op.axis
    by, yi = s[C].split(i, factor=block)
    bx, xi = s[C].split(j, factor=block)
    s[C].reorder(by, bx, yi, xi)
    s[C].bind(by, "blockIdx.y")
    s[C].bind(bx, "blockIdx.x")
    if vthreads > 1:
        vy, yi = s[C].split(yi, nparts=vthreads)
        vx, xi = s[C].split(xi, nparts=vthreads)
    ty, yi = s[C].split(yi, nparts=threads)
    tx, xi = s[C].split(xi, nparts=threads)
    if vthreads > 1:
        s[C].reorder(vy, vx, ty, tx, yi, xi)
        s[C].bind(vy, "vthread")
        s[C].bind(vx, "vthread")
    else:
        s[C].reorder(ty, tx, yi, xi)
    s[C].bind(ty, "threadIdx.y")
    s[C].bind(tx, "threadIdx.x")
    return tx, yi, xi


def stage_copy(s, T, threads, vector):
    """The copy stage T's loops (a 2-D tile) spread over threads x threads threads, `vector`
    consecutive elements of the inner axis per access."""
    a, b = s[T].op.axis
    b, v = s[T].split(b, factor=vector)
    t = s[T].fuse(a, b)
    ty, tx = s[T].split(t, nparts=threads)
    tx, rest = s[T].split(tx, nparts=threads)
    s[T].bind(ty, "threadIdx.y")
    s[T].bind(tx, "threadIdx.x")
    if vector > 1:
        s[T].vectorize(v)


def step2(n, vthreads=1):
    A, B, C = gemm(n)
    s = ts.create_schedule(C)
    AS = s.cache_read(A, "shared", [C])
    BS = s.cache_read(B, "shared", [C])
    CL = s.cache_write(C, "local")
    tx, _, _ = tile_c(s, C, 64, 16, vthreads)
    s[CL].compute_at(s[C], tx)
    yo, xo = CL.op.axis
    (k,) = CL.op.reduce_axis
    ko, ki = s[CL].split(k, factor=8)
    s[CL].reorder(ko, ki, yo, xo)
    for T in (AS, BS):
        s[T].compute_at(s[CL], ko)
        stage_copy(s, T, 16, 1)
    return s, [A, B, C]


# ---------------------------------------------------------------------------------------------
# 3. Virtual threads
#
# In step 2 thread (ty, tx) owns rows ty*4 .. ty*4+3: the threads of a warp read B's shared tile
# 16 bytes apart. Binding an outer 2 x 2 split to "vthread" makes each thread own four 2 x 2
# sub-tiles 32 rows and columns apart: neighbouring threads now read neighbouring words. tessel
# runs the virtual threads' shares one after another in each thread (interleaved once unrolled).
#
# Why this step is not faster than step 2 (on the H100 it was slower): the bank conflicts it
# removes are those of 32-bit loads, and step 2 has none to remove. NVRTC loads a thread's four
# consecutive values of B's tile with one 128-bit shared load (ld.shared.v4.f32 in the PTX), which
# the hardware serves a quarter-warp at a time, 8 threads x 16 bytes covering the 32 banks once:
# no conflict. The values of A are the same word for all threads of a row of the block (a
# broadcast). Striding the sub-tiles instead splits those loads into 64-bit ones and each thread's
# stores of C into runs of 2, so vthread buys nothing here. It pays where a thread's words cannot
# be read as one vector; step 4 gets conflict-free 128-bit loads from the layout of its shared
# tiles instead.
def step3(n):
    return step2(n, vthreads=2)


# ---------------------------------------------------------------------------------------------
# 4. The register tile, transposed shared tiles, 128-bit accesses
#
# 256 threads compute a 128 x 128 tile, 8 x 8 each. Per column of k a thread needs 8 values of
# A (a column of A's tile) and 8 of B (a row of B's tile): A's shared tile is stored transposed
# (storage_reorder), so both are 8 consecutive floats: two 128-bit shared loads each, into
# registers (cache_read to "local"). The 64 sums live in registers (cache_write to "local", loops
# fully unrolled, so every register index is a constant). The copies into shared memory load 128
# bits per thread from global memory (vectorize), and the results are stored 128 bits at a time.
# A's transposed tile is padded by 4 floats a row (storage_align): the 128-bit reads stay aligned
# and the transposing stores of a warp spread over the banks.
def step4(n, block=128, threads=16, bk=8):
    A, B, C = gemm(n)
    s = ts.create_schedule(C)
    AS = s.cache_read(A, "shared", [C])
    BS = s.cache_read(B, "shared", [C])
    AL = s.cache_read(AS, "local", [C])
    BL = s.cache_read(BS, "local", [C])
    CL = s.cache_write(C, "local")
    tx, yi, xi = tile_c(s, C, block, threads)
    xo, xv = s[C].split(xi, factor=4)
    s[C].unroll(yi)
    s[C].unroll(xo)
    s[C].vectorize(xv)
    s[CL].compute_at(s[C], tx)
    # Unrolling checks a loop's declared extent (the whole axis): split by the tile first.
    per_thread = block // threads
    _, yo = s[CL].split(CL.op.axis[0], factor=per_thread)
    _, xo = s[CL].split(CL.op.axis[1], factor=per_thread)
    (k,) = CL.op.reduce_axis
    ko, ki = s[CL].split(k, factor=bk)
    s[CL].reorder(ko, ki, yo, xo)
    for loop in (ki, yo, xo):
        s[CL].unroll(loop)
    s[AS].storage_reorder(1, 0)  # [k][i]: a column of the tile is contiguous
    s[AS].storage_align(0, block, 4)  # rows of block + 4 floats
    for T in (AL, BL):  # first: the shared tiles are then computed where their readers are
        s[T].compute_at(s[CL], ki)
        a, b = s[T].op.axis
        inner = a if T == AL else b
        _, inner = s[T].split(inner, factor=block // threads)
        o, v = s[T].split(inner, factor=4)
        s[T].unroll(o)
        s[T].vectorize(v)
    for T in (AS, BS):
        s[T].compute_at(s[CL], ko)
        stage_copy(s, T, threads, 4)
    return s, [A, B, C]


STEPS = [
    ("1. one thread per element", step1),
    ("2. shared-memory block tiling", step2),
    ("3. virtual threads", step3),
    ("4. register tile, transposed tiles, 128-bit accesses", step4),
]


def check_in_interpreter(make):
    """Runs the schedule at N_CHECK in the loop interpreter (SPMD, race detector)."""
    s, args = make(N_CHECK)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((N_CHECK, N_CHECK)).astype("float32")
    b = rng.standard_normal((N_CHECK, N_CHECK)).astype("float32")
    c = np.full((N_CHECK, N_CHECK), np.nan, dtype="float32")
    ts.lower(s, args).run(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def run_on_gpu(make, n):
    """Builds for the GPU, checks against numpy, returns GFLOP/s (median of 10 runs)."""
    s, args = make(n)
    f = ts.build(s, args, target="cuda")
    rng = np.random.default_rng(2)
    a = rng.standard_normal((n, n)).astype("float32")
    b = rng.standard_normal((n, n)).astype("float32")
    da, db = ts.nd.array(a, device=ts.cuda(0)), ts.nd.array(b, device=ts.cuda(0))
    dc = ts.nd.array(np.full((n, n), np.nan, dtype="float32"), device=ts.cuda(0))
    f(da, db, dc)
    rows = rng.choice(n, 64, replace=False)  # numpy checks 64 rows: a full product takes long
    expected = a[rows].astype("float64") @ b.astype("float64")
    np.testing.assert_allclose(dc.numpy()[rows], expected, rtol=1e-3, atol=1e-3)
    times = []
    for _ in range(10):
        t0 = time.perf_counter()
        f(da, db, dc)
        ts.cuda_synchronize(0)
        times.append(time.perf_counter() - t0)
    return 2.0 * n**3 / np.median(times) / 1e9, f


if __name__ == "__main__":
    for title, make in STEPS:
        check_in_interpreter(make)
        s, args = make(N_RUN)
        module = ts.build(s, args, target="cuda -arch=sm_90")  # NVRTC, with or without a GPU
        assert "__global__" in module.get_source("cu") and module.get_source("ptx")
        if HAVE_GPU:
            gflops, f = run_on_gpu(make, N_RUN)
            print(f"{title}: correct, {gflops:8.1f} GFLOP/s at n={N_RUN}")
        else:
            print(f"{title}: correct in the interpreter, compiles for sm_90 (no GPU here: "
                  f"{ts.cuda_unavailable_reason()})")

    # The final kernel, as CUDA C: print(module.get_source("cu")). Its registers and spills are in
    # ptxas's report: print(module.get_source("nvrtc_log")).
    report = module.get_source("nvrtc_log").splitlines()
    print("\n".join(line for line in report if "Used" in line or "spill" in line))
