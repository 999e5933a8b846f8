"""Tutorial 8: matrix multiplication on Hopper's warp-group tensor cores (wgmma), step by step.

    C[i, j] = sum_k float32(A[i, k]) * float32(B[k, j])     (A, B float16 or bfloat16; C float32)

Tutorial 7 reaches the tensor cores through mma.sync, which a warp issues and waits for. On Hopper
(sm_90a) the tensor cores take larger, asynchronous multiplies from a *warp group*, the 4
consecutive warps 4g .. 4g + 3 of a block: `wgmma.mma_async.m64nNk16` multiplies a 64 x 16 tile of
A by a 16 x N tile of B (N up to 256) into 64 x N accumulators held in the group's registers,
reading A and B straight from shared memory through *matrix descriptors* (start address, row
strides, swizzle mode). tessel reaches it through `tensorize` with the intrinsics
wgmma_m64n<N>k16_f16 / _bf16: each warp of the group tensorizes its own 16 x N slice of the
accumulator (a "warp" buffer of C fragments, stored by store_c as in tutorial 7), with its 16 x 16
tile of A and the group's B; the warps of a group must be threadIdx.y 4g .. 4g + 3 holding rows
16 r of one 64-row tile, which lowering and code generation check. The compiler places the
instruction's fences, commits and waits (one group per k tile; in the k loop a group stays in
flight while the threads copy the next tiles) and the proxy fence that makes shared tiles written
by ordinary stores or cp.async visible to the tensor cores.

The shared tiles must be laid out as the descriptors describe: rows of 32, 64 or 128 bytes swizzled
with the hardware's pattern, which is storage_swizzle()'s on such rows. A (k-major) takes rows of
64 halves (k tiles of 64: 128-byte swizzle). B[k, j] is n-major: it is stored in column panels of
64 halves, [n / 64][k][64] (storage_split and storage_reorder), each panel's rows swizzled.

  1. wgmma with pipelined copies: 128 x 128 tiles of C per block of 2 warp groups (8 warps), k tiles
     of 64, A's and B's tiles copied by cp.async four iterations ahead (pipeline(4), tutorial 7's
     step 4), one wgmma m64n128k16 per warp and 16 columns of k;
  2. 128 x 256 tiles: wgmma m64n256k16, 128 accumulators per thread, half the traffic from L2
     per multiply of step 1.
  3. TMA: the tiles fetched by bulk tensor copies that one thread issues (s[T].tma()), each
     pipeline copy awaited on its own mbarrier.
  4. A persistent kernel: a block an SM, each computing several tiles in turn; the pipeline runs
     on from one tile to the next, so the next tile's copies land during this tile's store.
  5. Warp specialization: a producer warp group of its own issues the TMA copies; the two
     consumer warp groups wait for each copy on its mbarrier and release it on another, with no
     block barrier in the k loop; registers move from the producer to the consumers.
  6. The tuner: ts.auto_schedule's multi_level_tiling_wgmma sketch is step 4 with its choices
     open (block tiles of 64 or 128 rows and 64, 128 or 256 columns, the block-row groups, the
     pipeline's depth, step 5's producer warp group or not), beside tutorial 7's mma.sync sketch;
     benchmarks/tune_gemm_fp16_cuda.py tunes 4096^3 with it and times the best against step 4.
  7. TMA stores: step 4 with 128 x 128 tiles whose accumulators go through a swizzled shared
     copy of the tile, stored by one thread's bulk tensor copies (s[C].tma_store()).

Every step is checked in tessel's SPMD interpreter at a small size (warp groups, the asynchronous
proxy: an accumulator read before its wait, a tile overwritten while a wgmma reads it, or a store
not fenced for the async proxy are errors there), and compiled by NVRTC for sm_90a (the PTX has
wgmma.mma_async); on a Hopper GPU it runs at full size against numpy and prints its TFLOP/s.
benchmarks/gemm_fp16_cuda.py measures it against cuBLAS and Triton.

Run:  python tutorials/08_hopper_gemm.py [--small]
"""
import sys
import time

import numpy as np

import tessel as ts

SMALL = "--small" in sys.argv
N_RUN = 2048 if SMALL else 4096


def gemm(m, n, k, dtype="float16", bt=False):
    """C = A @ B (B k x n), or A @ B^T (B n x k) when bt."""
    A = ts.placeholder((m, k), dtype=dtype, name="A")
    B = ts.placeholder((n, k) if bt else (k, n), dtype=dtype, name="B")
    r = ts.reduce_axis((0, k), name="k")
    if bt:
        body = lambda i, j: ts.sum(A[i, r].astype("float32") * B[j, r].astype("float32"), axis=r)
    else:
        body = lambda i, j: ts.sum(A[i, r].astype("float32") * B[r, j].astype("float32"), axis=r)
    return A, B, ts.compute((m, n), body, name="C")


def copy_to_shared(s, T, groups, vector=8):
    """A cooperative copy by the block's 128 x groups threads, 16 bytes per access."""
    a, b = s[T].op.axis
    b, v = s[T].split(b, factor=vector)
    t = s[T].fuse(a, b)
    t, x = s[T].split(t, factor=32)
    t, y = s[T].split(t, factor=4)
    o, z = s[T].split(t, factor=groups)
    s[T].bind(x, "threadIdx.x")
    s[T].bind(y, "threadIdx.y")
    s[T].bind(z, "threadIdx.z")
    s[T].unroll(o)
    s[T].vectorize(v)


# ---------------------------------------------------------------------------------------------
# 1. wgmma with pipelined copies
#
# C's loops: blocks of bm x bn (blockIdx), warp groups of 64 rows (threadIdx.z), warps of 16 rows
# (threadIdx.y, the group's 4 warps), 16 x 8 fragments stored by store_c. The accumulator
# (cache_write to "warp") is computed at the warp loop: each warp's 16 x bn slice, whose innermost
# 16 x bn x 16 loops become one wgmma. A's bm x 64 tile is k-major with rows of 128 bytes; B's
# 64 x bn tile is stored [bn / 64][64][64], and both are swizzled (storage_swizzle), the layouts
# the descriptors name. The copies are tutorial 7's: 16-byte cp.async, four tiles in flight.
def step1(m, n, k, dtype="float16", bm=128, bn=128, bk=64, stages=4, bt=False, group=1,
          tma=False):
    s, args, stages_, (bi, g, w, i, bj, fj, j) = gemm_tiles(m, n, k, dtype, bt, bm, bn)
    C = args[2]
    if group > 1:  # blocks numbered down `group` block rows first (tutorial 7's tile_output)
        bg, bi = s[C].split(bi, factor=group)
        s[C].reorder(bg, bj, bi, g, w, fj, i, j)
        s[C].bind(bg, "blockIdx.y")
        s[C].bind(s[C].fuse(bj, bi), "blockIdx.x")
    else:
        s[C].reorder(bi, bj, g, w, fj, i, j)
        s[C].bind(bi, "blockIdx.y")
        s[C].bind(bj, "blockIdx.x")
    warp_groups_and_k_tiles(s, stages_, (g, w, fj, i), dtype, bm, bn, bk, stages, bt, tma)
    return s, args


def gemm_tiles(m, n, k, dtype, bt, bm, bn):
    """The GEMM's schedule, its stages (C, the accumulator CF, A's and B's shared tiles AS, BS)
    and C's loops: bm x bn blocks (bi, bj), warp groups of 64 rows (g), warps of 16 rows (w,
    then i), fragments of 8 columns (fj, then j)."""
    A, B, C = gemm(m, n, k, dtype, bt)
    s = ts.create_schedule(C)
    AS = s.cache_read(A, "shared", [C])
    BS = s.cache_read(B, "shared", [C])
    CF = s.cache_write(C, "warp")
    i, j = C.op.axis
    bi, i = s[C].split(i, factor=bm)
    g, i = s[C].split(i, factor=64)
    w, i = s[C].split(i, factor=16)
    bj, j = s[C].split(j, factor=bn)
    fj, j = s[C].split(j, factor=8)
    return s, [A, B, C], (C, CF, AS, BS), (bi, g, w, i, bj, fj, j)


def warp_groups_and_k_tiles(s, stages_, loops, dtype, bm, bn, bk, stages, bt, tma):
    """C's warp groups (g), warps (w) and fragment stores (fj, i); the accumulator CF's k tiles
    of bk, one wgmma per warp and 16 of k; A's and B's swizzled tiles AS, BS, pipelined `stages`
    deep (TMA or cp.async)."""
    C, CF, AS, BS = stages_
    g, w, fj, i = loops
    s[C].bind(g, "threadIdx.z")
    s[C].bind(w, "threadIdx.y")
    s[C].unroll(fj)
    s[C].tensorize(i, "store_c")
    s[CF].compute_at(s[C], w)
    ci, cj = CF.op.axis
    (ck,) = CF.op.reduce_axis
    ko, ck = s[CF].split(ck, factor=bk)
    ki, ck = s[CF].split(ck, factor=16)
    s[CF].reorder(ko, ki, ci, cj, ck)
    s[CF].unroll(ki)
    suffix = ("f16" if dtype == "float16" else "bf16") + ("_bt" if bt else "")
    s[CF].tensorize(ci, f"wgmma_m64n{bn}k16_{suffix}")
    for T in (AS, BS):
        s[T].compute_at(s[CF], ko)
    if not bt:  # B[k, j] in column panels of 64: [bn / 64][bk][64]
        s[BS].storage_split(1, 64)
        s[BS].storage_reorder([1, 0, 2])
    for T in (AS, BS):
        s[T].storage_swizzle()
        if tma:
            s[T].tma()
        else:
            copy_to_shared(s, T, bm // 64)
        s[T].pipeline(stages)


# ---------------------------------------------------------------------------------------------
# 2. 128 x 256 tiles
#
# The largest tile two warp groups hold in registers (128 accumulators per thread): each warp's
# wgmma m64n256k16 reads its group's 64 x 16 slice of A once per 256 columns, and each block reads
# (128 + 256) x 64 halves per 128 x 256 x 64 multiply (85 FLOP per byte of L2 traffic, against
# 64 for step 1). Four pipelined copies take 4 x 48 KB of shared memory (sm_90 has 227 KB).
def step2(m, n, k, dtype="float16", bt=False, group=1):
    return step1(m, n, k, dtype, bm=128, bn=256, bt=bt, group=group)


# ---------------------------------------------------------------------------------------------
# 3. TMA copies on mbarriers
#
# Step 2's tiles, fetched by the Tensor Memory Accelerator: s[T].tma() leaves the copy's loops
# alone and one thread issues a bulk tensor copy a box (A's 128 x 64 tile is one box of 128-byte
# rows; B's 64 x 256 tile four boxes, one a column panel) straight into the swizzled layout the
# descriptors name (TMA's 128-byte swizzle is storage_swizzle's). The compiler gives each of the
# four pipeline copies an mbarrier: the issuing thread announces the copy's bytes on it, every
# thread waits for its phase before the wgmmas read the copy, and the barrier after wgmma's
# wait(1) orders the refill. The 256 threads no longer compute copy addresses: the k loop's
# instructions are the wgmmas, the waits and one thread's copies.
def step3(m, n, k, dtype="float16", bt=False, group=1):
    return step1(m, n, k, dtype, bm=128, bn=256, bt=bt, group=group, tma=True)


# ---------------------------------------------------------------------------------------------
# 4. A persistent kernel
#
# Step 3 pays, for every tile, the pipeline's fill before its first wgmma and the store of its
# accumulators after the last, with nothing overlapping them at one block per SM (at k = 16384
# step 3 is within 7 % of cuBLAS, at k = 1024 at 0.57 x). Here each block computes several tiles
# in turn: the tiles (numbered `group` block rows first) are split into `blocks` blocks, about
# one an SM, and a serial loop over each block's tiles encloses the warp groups. TMA's pipeline
# then runs on across that loop: the compiler hoists the tiles and mbarriers out of it and
# issues the next tile's first k tiles during this tile's last ones, so they land while this
# tile's accumulators are stored.
def sm_blocks(tiles, sms=132):
    """The most blocks, at most `sms`, that divide `tiles` (every block the same tile count)."""
    return max(b for b in range(1, min(tiles, sms) + 1) if tiles % b == 0)


def step4(m, n, k, dtype="float16", bt=False, group=8, blocks=None, bm=128, bn=256, bk=64,
          stages=4):
    s, args, stages_, (bi, g, w, i, bj, fj, j) = gemm_tiles(m, n, k, dtype, bt, bm, bn)
    C = args[2]
    bg, bi = s[C].split(bi, factor=group)
    s[C].reorder(bg, bj, bi, g, w, fj, i, j)
    tile = s[C].fuse(bg, bj, bi)
    tt, b = s[C].split(tile, factor=blocks or sm_blocks((m // bm) * (n // bn)))
    s[C].reorder(b, tt, g, w, fj, i, j)
    s[C].bind(b, "blockIdx.x")
    warp_groups_and_k_tiles(s, stages_, (g, w, fj, i), dtype, bm, bn, bk, stages, bt, tma=True)
    return s, args


# ---------------------------------------------------------------------------------------------
# 5. Warp specialization
#
# In step 4 every k tile ends with a block barrier: after its wgmma.wait_group(1) each warp
# group waits for the other before one thread refills the copy both have read (Nsight Compute
# put 39 % of the cycles between the kernel's issues there at 4096^3, when a proxy fence, a
# full memory barrier on sm_90, still preceded it; without the fence step 4 runs level with this
# step, at 0.99 x cuBLAS: docs/perf/tensor-cores.md). s[T].warp_specialize()
# gives the copies a warp group of their own (threadIdx.z == 2, 384 threads a block): its first
# thread loops over the tiles and k tiles, waits on an "empty" mbarrier until both consumer
# warp groups have released the copy it refills (each thread arrives on it after the wgmma
# group that read the copy has retired) and issues the next TMA copies on the "full" one. The
# consumers only wait, multiply and release: no block barrier in the loop, each warp group at
# its own pace. The producer needs few registers: setmaxnreg gives it 40 and the consumers 232
# (the kernel is declared __launch_bounds__(384, 1)), room for the 128 accumulators.
def step5(m, n, k, dtype="float16", bt=False, group=8, blocks=None):
    s, args = step4(m, n, k, dtype, bt, group=group, blocks=blocks)
    for T in s.stages:
        if T.op.name.endswith(".shared"):
            T.warp_specialize()
    return s, args


# ---------------------------------------------------------------------------------------------
# 7. The tile stored by TMA
#
# Steps 1-5 store the accumulators straight from the registers: each thread writes its fragments'
# pairs of floats, rows 8 apart. Here the tile goes out as TMA stores: the warps store their
# fragments into a shared copy of the tile (C.shared = s.cache_write(C, "shared"), laid out in
# column panels of 32 floats whose 128-byte rows are swizzled, so that a fragment store's 8 rows
# hit different banks), and s[C].tma_store() turns C's copy out of it into bulk tensor stores:
# every thread fences its stores for the asynchronous proxy, a barrier, then one thread issues one
# store a panel (a box of 128 rows x 32 floats; rows past m and columns past n are not stored) and
# waits until they have read the tile before the block writes it again. The tile is 128 x 128:
# its 64 KB of float32 beside four 32 KB k tiles fit the 227 KB of shared memory.
def step7(m, n, k, dtype="float16", bt=False, group=8, blocks=None, bm=128, bn=128, bk=64,
          stages=4, panels=True):
    A, B, C = gemm(m, n, k, dtype, bt)
    s = ts.create_schedule(C)
    AS = s.cache_read(A, "shared", [C])
    BS = s.cache_read(B, "shared", [C])
    CS = s.cache_write(C, "shared")
    CF = s.cache_write(CS, "warp")
    i, j = C.op.axis
    bi, i = s[C].split(i, factor=bm)
    bj, j = s[C].split(j, factor=bn)
    bg, bi = s[C].split(bi, factor=group)
    s[C].reorder(bg, bj, bi, i, j)
    tile = s[C].fuse(bg, bj, bi)
    tiles = -(-m // bm) * -(-n // bn)
    tt, b = s[C].split(tile, factor=blocks or sm_blocks(tiles))
    s[C].reorder(b, tt, i, j)
    s[C].bind(b, "blockIdx.x")
    s[CS].compute_at(s[C], tt)
    s[C].tma_store()
    if panels:  # [bn / 32][bm][32]: panels of 128-byte rows, one TMA box each
        s[CS].storage_split(1, 32)
        s[CS].storage_reorder([1, 0, 2])
        s[CS].storage_swizzle()
    ci, cj = CS.op.axis
    g, ci = s[CS].split(ci, factor=64)
    w, ci = s[CS].split(ci, factor=16)
    fj, cj = s[CS].split(cj, factor=8)
    s[CS].reorder(g, w, fj, ci, cj)
    warp_groups_and_k_tiles(s, (CS, CF, AS, BS), (g, w, fj, ci), dtype, bm, bn, bk, stages, bt,
                            tma=True)
    return s, [A, B, C]


STEPS = [
    ("1. wgmma, pipelined copies, 128 x 128 tiles", step1, (128, 128, 192)),
    ("2. 128 x 256 tiles", step2, (128, 256, 128)),
    ("3. TMA copies on mbarriers", step3, (128, 256, 320)),
    ("4. a persistent kernel", lambda m, n, k, dtype="float16", bt=False:
        step4(m, n, k, dtype, bt, group=2, blocks=2), (256, 512, 384)),
    ("5. warp specialization", lambda m, n, k, dtype="float16", bt=False:
        step5(m, n, k, dtype, bt, group=2, blocks=2), (256, 512, 384)),
    ("7. the tile stored by TMA", lambda m, n, k, dtype="float16", bt=False:
        step7(m, n, k, dtype, bt, group=2, blocks=2), (200, 296, 192)),
]


def inputs(m, n, k, dtype, seed, bt=False):
    if dtype == "bfloat16":  # numpy's bfloat16 comes from ml_dtypes
        import ml_dtypes
        dtype = ml_dtypes.bfloat16
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if bt else (k, n)).astype(dtype)
    return a, b


def check_in_interpreter(make, shape, dtype="float16", bt=False):
    """Runs make's schedule in the loop interpreter (SPMD, warp groups, race detector)."""
    m, n, k = shape
    s, args = make(m, n, k, dtype, bt=bt)
    a, b = inputs(m, n, k, dtype, 1, bt)
    c = np.full((m, n), np.nan, dtype="float32")
    ts.lower(s, args).run(a, b, c)
    ref = a.astype("float64") @ (b.T if bt else b).astype("float64")
    np.testing.assert_allclose(c, ref, rtol=2e-3, atol=2e-3)


def run_on_gpu(make, n, dtype="float16"):
    """Builds for the GPU, checks against numpy, returns TFLOP/s (median of 20 runs)."""
    s, args = make(n, n, n, dtype)
    f = ts.build(s, args, target="cuda -arch=sm_90a")
    a, b = inputs(n, n, n, dtype, 2)
    da, db = ts.nd.array(a, device=ts.cuda(0)), ts.nd.array(b, device=ts.cuda(0))
    dc = ts.nd.array(np.full((n, n), np.nan, dtype="float32"), device=ts.cuda(0))
    f(da, db, dc)
    rows = np.random.default_rng(3).choice(n, 64, replace=False)
    np.testing.assert_allclose(dc.numpy()[rows], a[rows].astype("float64") @ b.astype("float64"),
                               rtol=1e-2, atol=1e-1)
    times = []
    for _ in range(20):
        t0 = time.perf_counter()
        f(da, db, dc)
        ts.cuda_synchronize(0)
        times.append(time.perf_counter() - t0)
    return 2.0 * n ** 3 / np.median(times) / 1e12, f


def on_hopper():
    return ts.cuda_available() and ts.cuda_device_info(0)["arch"] == "sm_90"


if __name__ == "__main__":
    for title, make, check_shape in STEPS:
        check_in_interpreter(make, check_shape)
        s, args = make(N_RUN, N_RUN, N_RUN)
        module = ts.build(s, args, target="cuda -arch=sm_90a")  # NVRTC, with or without a GPU
        assert "wgmma.mma_async.sync.aligned" in module.get_source("ptx")
        if on_hopper():
            tflops, f = run_on_gpu(make, N_RUN)
            print(f"{title}: correct, {tflops:7.1f} TFLOP/s at n={N_RUN}")
        else:
            print(f"{title}: correct in the interpreter, compiles for sm_90a")
        report = module.get_source("nvrtc_log").splitlines()
        print("\n".join("  " + line for line in report if "Used" in line or "spill" in line))
    # 6. The tuner's space: one wgmma sketch per block tile, then mma.sync's; a random wgmma
    # state checked in the interpreter.
    task = ts.SearchTask("matmul_mixed", (256, 512, 384, "float16"), target="cuda -arch=sm_90a")
    space = ts.auto_schedule.SearchSpace(task)
    print("6. the tuner's sketches:", ", ".join(k.trace[0].split(": ")[1] for k in space.sketches))
    state = next(s for s in space.sample(8, seed=1)["states"] if "wgmma" in s.to_python())
    check_in_interpreter(lambda m, n, k, dtype, bt: (state.schedule, list(task.dag.args)),
                         (256, 512, 384))
    print("   a random wgmma state: correct in the interpreter")
    # B read n x k (a dense layer's weight): the _bt intrinsics, B k-major like A.
    check_in_interpreter(step1, (128, 128, 128), bt=True)
    print("B read n x k (wgmma_m64n128k16_f16_bt): correct in the interpreter")
