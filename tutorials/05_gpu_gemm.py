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
     vectorized to 128 bits;
  5. any shape: tiles that do not divide the matrix (padded tiles, unswitched edges), and tiles
     chosen for the shape so that every multiprocessor has work;
  6. double buffering: the next tiles' global loads in flight while the current ones compute
     (double_buffer), with step 3's strided parts: about 0.95 x cuBLAS on an H100.
  7. pipelined copies: the tiles of the next two iterations copied into shared memory by the
     GPU's asynchronous copy engine (cp.async, sm_80+) while this one computes (pipeline(3)).

Every step is checked: on any machine, at a small size, in tessel's loop interpreter (which runs
the kernels as SPMD programs and reports races between threads), and compiled by NVRTC for sm_90;
on a machine with a GPU, at full size on the GPU against numpy, with its GFLOP/s.
benchmarks/gemm_cuda.py measures steps 6 and 7 against cuBLAS.

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


def gemm(n, m=None, kdim=None):
    """C (m x n) = A (m x k) @ B (k x n); m and k default to n."""
    m, kdim = m or n, kdim or n
    A = ts.placeholder((m, kdim), name="A")
    B = ts.placeholder((kdim, n), name="B")
    k = ts.reduce_axis((0, kdim), name="k")
    C = ts.compute((m, n), lambda i, j: ts.sum(A[i, k] * B[k, j], axis=k), name="C")
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
# tiles instead. With step 4's 8 x 8 results per thread the picture changes: a thread's 8 values
# are two 128-bit loads 32 bytes apart from its neighbour's, so a quarter-warp's loads span 256
# bytes (two-way conflicts); as 2 x 2 strided parts of 4 x 4 (vthreads=2) neighbours are 16 bytes
# apart again. Step 6 uses that, and there it pays (0.81 -> 0.95 x cuBLAS with double buffering).
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
def step4(n, block=128, threads=16, bk=8, vthreads=1, m=None, k=None, double_buffer=False,
          pipeline=0, kept_a=False):
    """The register-tile schedule; `m` and `k` give other shapes than n x n x n (step 5);
    `double_buffer` pipelines the shared tiles' fetches (step 6); `pipeline` (a depth >= 2)
    copies them asynchronously over that many buffers (step 7). `kept_a` (an experiment,
    benchmarks/gemm_cuda_kept_a.py): A's tile kept as it is, so that cp.async copies it 16 bytes
    at a time, and its register copy loaded along k, 4 columns of k per 128-bit load."""
    A, B, C = gemm(n, m, k)
    s = ts.create_schedule(C)
    AS = s.cache_read(A, "shared", [C])
    BS = s.cache_read(B, "shared", [C])
    AL = s.cache_read(AS, "local", [C])
    BL = s.cache_read(BS, "local", [C])
    CL = s.cache_write(C, "local")
    tx, yi, xi = tile_c(s, C, block, threads, vthreads)
    xo, xv = s[C].split(xi, factor=4)
    s[C].unroll(yi)
    s[C].unroll(xo)
    s[C].vectorize(xv)
    s[CL].compute_at(s[C], tx)
    # Unrolling checks a loop's declared extent (the whole axis): split by the tile first.
    per_thread = block // threads // vthreads
    _, yo = s[CL].split(CL.op.axis[0], factor=per_thread)
    _, xo = s[CL].split(CL.op.axis[1], factor=per_thread)
    (k,) = CL.op.reduce_axis
    ko, ki = s[CL].split(k, factor=bk)
    k_loops = s[CL].split(ki, factor=4) if kept_a else (ki,)
    s[CL].reorder(ko, *k_loops, yo, xo)
    for loop in (*k_loops, yo, xo):
        s[CL].unroll(loop)
    if kept_a:  # A [i][k], rows of bk + 4 floats; AL: a thread's rows x 4 columns of k
        s[AS].storage_align(0, bk, 4)
        s[AL].compute_at(s[CL], k_loops[0])
        i, kv = s[AL].op.axis
        _, i = s[AL].split(i, factor=per_thread)
        s[AL].unroll(i)
        s[AL].vectorize(kv)
    else:
        s[AS].storage_reorder(1, 0)  # [k][i]: a column of the tile is contiguous
        s[AS].storage_align(0, block, 4)  # rows of block + 4 floats
    # The read caches first: the shared tiles are then computed where their readers are.
    for T in (BL,) if kept_a else (AL, BL):
        s[T].compute_at(s[CL], k_loops[-1])
        a, b = s[T].op.axis
        inner = a if T == AL else b
        _, inner = s[T].split(inner, factor=per_thread)
        o, v = s[T].split(inner, factor=4)
        s[T].unroll(o)
        s[T].vectorize(v)
    for T in (AS, BS):
        s[T].compute_at(s[CL], ko)
        stage_copy(s, T, threads, 4)
        if double_buffer:
            s[T].double_buffer()
        if pipeline:
            s[T].pipeline(pipeline)
    return s, [A, B, C]


# ---------------------------------------------------------------------------------------------
# 5. Any shape: tiles that do not divide it, and tiles chosen for it
#
# Step 4 works at any M x N x K: where the tiles run past the matrix, tessel computes the whole
# tile anyway (a "padded tile"). The copies into shared memory read zero past A's and B's edges,
# so the register-tile loop needs no check at all; only the stores into C keep one. The copies
# and the stores are unswitched: blocks (and threads) whose tile lies inside the matrix run a
# version without checks (128-bit loads and stores where the row length allows), the others one
# with them. A k loop that the tile does not divide gets a last iteration of its own.
#
# What the shape still decides is the tile: at 1000 x 1000, 128 x 128 tiles make 64 blocks for
# the H100's 132 multiprocessors, half of them idle. choose_tiles takes the largest tile that
# still gives every multiprocessor work. benchmarks/gemm_cuda.py --sweep times every candidate.
TILE_CONFIGS = [
    dict(block=128, threads=16, bk=8),  # step 4: 8 x 8 per thread, 256 threads
    dict(block=128, threads=16, bk=8, vthreads=2),  # the same, as 2 x 2 strided 4 x 4 parts
    dict(block=128, threads=16, bk=16),  # 16 columns of k per barrier
    dict(block=128, threads=16, bk=16, vthreads=2),
    dict(block=64, threads=8, bk=8),  # 8 x 8 per thread, 64 threads
    dict(block=64, threads=8, bk=16),
    dict(block=64, threads=16, bk=8),  # 4 x 4 per thread, 256 threads
    dict(block=64, threads=16, bk=16),
    dict(block=64, threads=16, bk=32),
    dict(block=64, threads=16, bk=16, vthreads=2),
]


def choose_tiles(m, n, k, sm_count, double_buffer=True):
    """The tile configuration for an m x n x k product on a GPU with `sm_count` multiprocessors,
    from the sweep on the H100 (docs/perf/gpu-gemm-shapes.md): 128 x 128 tiles of 8 x 8 per thread
    as strided 4 x 4 parts, 8 columns of k per step, when they give every multiprocessor a block;
    else 64 x 64 tiles of 4 x 4 per thread, 16 columns of k per step. `double_buffer`: with the
    fetches pipelined (step 6)."""
    blocks = -(-m // 128) * -(-n // 128)
    if blocks >= sm_count:
        return dict(block=128, threads=16, bk=8, vthreads=2, double_buffer=double_buffer)
    return dict(block=64, threads=16, bk=16, double_buffer=double_buffer)


def step5(m, n, k, sm_count=132):
    """Step 4 at any m x n x k with the tiles chosen for the shape."""
    return step4(n, m=m, k=k, **choose_tiles(m, n, k, sm_count, double_buffer=False))


# ---------------------------------------------------------------------------------------------
# 6. Double buffering: the next tiles load while this one computes
#
# In steps 4 and 5 every iteration of k.outer waits for its global loads before it can compute:
# load A's and B's tiles, barrier, compute, barrier. double_buffer() gives a shared tile two
# copies: while the threads compute on one, the next tiles' global loads are already in flight
# into registers, and are stored into the other copy after the computation; one barrier per
# iteration. tessel restructures the k.outer loop itself (the first fetch before the loop, the
# last computation after it) and checks it like any other schedule. With the 2 x 2 strided parts
# of step 3 (conflict-free 128-bit shared reads) this is tessel's fastest fp32 GEMM:
# benchmarks/gemm_cuda.py runs it, tiles chosen for the shape.
def step6(n, m=None, k=None, sm_count=132):
    m, k = m or n, k or n
    return step4(n, m=m, k=k, **choose_tiles(m, n, k, sm_count))


# ---------------------------------------------------------------------------------------------
# 7. Pipelined copies: cp.async, several tiles in flight
#
# Step 6 still moves every tile through registers: each thread loads its part of the next tiles
# into registers and stores them into shared memory after computing. From sm_80 on, a GPU copies
# global memory into shared memory itself (cp.async): the threads only issue the copies and wait
# for them later, no registers held, and several iterations' copies can be in flight at once.
# pipeline(3) gives each shared tile three copies: while iteration v computes on copy v % 3, the
# tiles of iterations v + 1 and v + 2 are on their way. tessel issues the first two fetches
# before the k loop; each iteration waits for its own tile (cp_async_wait(1): all but the newest
# group landed), passes one barrier, computes, and issues the fetch two iterations ahead. The
# 128-bit fetches become 16-byte copies; where the tile runs past the matrix the copy reads
# nothing and fills zeros (cp.async's source size). The interpreter checks that no thread reads
# a tile before its copy landed. benchmarks/gemm_cuda.py --pipeline times it.
def step7(n, m=None, k=None, sm_count=132, depth=3):
    m, k = m or n, k or n
    tiles = choose_tiles(m, n, k, sm_count, double_buffer=False)
    return step4(n, m=m, k=k, pipeline=depth, **tiles)


STEPS = [
    ("1. one thread per element", step1),
    ("2. shared-memory block tiling", step2),
    ("3. virtual threads", step3),
    ("4. register tile, transposed tiles, 128-bit accesses", step4),
    ("6. double buffering (and step 3's strided parts)", step6),
    ("7. pipelined copies (cp.async, 3 stages)", step7),
]
# Step 5 (any shape) is shown after the loop, at its own shapes; step 6 builds on it.
# Step 5's shapes: one that no tile divides, and 1000^3, where 128 x 128 tiles leave SMs idle.
ODD_CHECK = (125, 100, 121)  # m, n, k for the interpreter: partial tiles in every dimension
ODD_RUN = [(N_RUN - 3, N_RUN - 28, N_RUN - 7), (1000, 1000, 1000)]


def shapes_of(args):
    """(m, k), (k, n), (m, n): the shapes of A, B and C."""
    return [tuple(int(d) for d in t.shape) for t in args]


def check_in_interpreter(make, n=N_CHECK):
    """Runs make(n)'s schedule in the loop interpreter (SPMD, race detector)."""
    s, args = make(n)
    (m, k), (_, n2), _ = shapes_of(args)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k)).astype("float32")
    b = rng.standard_normal((k, n2)).astype("float32")
    c = np.full((m, n2), np.nan, dtype="float32")
    ts.lower(s, args).run(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def run_on_gpu(make, n):
    """Builds for the GPU, checks against numpy, returns GFLOP/s (median of 10 runs)."""
    s, args = make(n)
    (m, k), (_, n2), _ = shapes_of(args)
    f = ts.build(s, args, target="cuda")
    rng = np.random.default_rng(2)
    a = rng.standard_normal((m, k)).astype("float32")
    b = rng.standard_normal((k, n2)).astype("float32")
    da, db = ts.nd.array(a, device=ts.cuda(0)), ts.nd.array(b, device=ts.cuda(0))
    dc = ts.nd.array(np.full((m, n2), np.nan, dtype="float32"), device=ts.cuda(0))
    f(da, db, dc)
    rows = rng.choice(m, 64, replace=False)  # numpy checks 64 rows: a full product takes long
    expected = a[rows].astype("float64") @ b.astype("float64")
    np.testing.assert_allclose(dc.numpy()[rows], expected, rtol=1e-3, atol=1e-3)
    times = []
    for _ in range(10):
        t0 = time.perf_counter()
        f(da, db, dc)
        ts.cuda_synchronize(0)
        times.append(time.perf_counter() - t0)
    return 2.0 * m * n2 * k / np.median(times) / 1e9, f


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

    # 5. Any shape: partial tiles in every dimension, checked in the interpreter; on a GPU, step
    # 4's 128 x 128 tiles against the tiles chosen for the shape.
    check_in_interpreter(lambda _: step5(*ODD_CHECK))
    sms = ts.Target("cuda").sm_count if HAVE_GPU else 132
    for m, n, k in ODD_RUN:
        s, args = step5(m, n, k, sms)
        ts.build(s, args, target="cuda -arch=sm_90")
        if not HAVE_GPU:
            print(f"5. any shape, {m}x{n}x{k}: compiles for sm_90")
            continue
        fixed, _ = run_on_gpu(lambda _: step4(n, m=m, k=k), None)
        chosen, _ = run_on_gpu(lambda _: step5(m, n, k, sms), None)
        print(f"5. any shape, {m}x{n}x{k}: step 4's tiles {fixed:8.1f} GFLOP/s, tiles "
              f"{choose_tiles(m, n, k, sms)} {chosen:8.1f} GFLOP/s")
