"""Tutorial 7: matrix multiplication on tensor cores (mma.sync), step by step.

    C[i, j] = sum_k float32(A[i, k]) * float32(B[k, j])     (A, B float16; C float32)

A tensor core multiplies small matrices held by the 32 threads ("lanes") of a warp together:
`mma.sync.m16n8k16` computes a 16 x 8 tile D = A (16 x 16) * B (16 x 8) + C with every lane holding
a few elements of each operand ("fragments", in registers, at places PTX fixes). tessel reaches it
through `tensorize`: the schedule shapes a stage's innermost loops like a declared tensor
intrinsic (a 16 x 8 x 16 matmul, a 16 x 16 copy, ...; tessel.tensor_intrins() lists them) and
tensorize replaces them by the intrinsic, after checking that they match. Fragments are stages of
"warp" scope (cache_read / cache_write to "warp"); only tensor intrinsics read and write them.
The warps are threadIdx.x (extent 32); threadIdx.y and .z number the warps of a block.

  1. fragments and mma.sync: 128 x 128 tiles of C per block of 4 warps (64 x 64 each, 4 x 8
     mma.sync per 16 columns of k), A's and B's 128 x 32 and 32 x 128 tiles copied into shared
     memory with 128-bit loads, fragments loaded by each lane with plain loads (load_a16,
     load_b16), C's stored the same way (store_c);
  2. ldmatrix: fragments loaded by `ldmatrix` (ldmatrix_a; ldmatrix_b_trans_x4, two B fragments
     of B's k-major tile at once), rows padded by 16 bytes (storage_align) so that the 8 rows an
     ldmatrix reads fall in different banks;
  3. double buffering: the next tiles' global loads in flight while the current ones compute
     (double_buffer), every fragment loop unrolled (register indices are constants);
  4. pipelined copies and larger tiles: 128 x 256 tiles of C per block of 8 warps, the shared
     tiles of the next three iterations copied by cp.async while this one computes
     (pipeline(4)): no registers spent on staging, and a quarter less traffic from L2 per
     multiply than 128 x 128 tiles;
  5. swizzled shared tiles: step 4 with the tiles laid out without padding (storage_swizzle: each
     row's 16-byte chunks permuted by XOR with the row number, so ldmatrix's 8 rows and a quarter
     warp's 16-byte cp.async copies still hit all 32 banks): 96 KB of shared memory instead of
     106 KB for the four copies, and no padded rows to skip;
  6. k tiles of 64: step 5 with half the waits and block barriers per multiply (192 KB of shared
     memory: sm_90).

Every step is checked in tessel's SPMD interpreter at a small size, which runs the warps with
PTX's fragment layouts (a lane that misses an mma.sync is an error there), and compiled by NVRTC
for sm_80 and sm_90 (the PTX has mma.sync; step 6 for sm_90 only); on a machine with a GPU it runs
at full size against numpy and prints its TFLOP/s. The same schedule takes bfloat16
(mma_m16n8k16_bf16) and, with plain fragment loads, float32 as tf32 (mma_m16n8k8_tf32).
benchmarks/gemm_fp16_cuda.py measures step 6 against cuBLAS and the register-only mma.sync peak.

Run:  python tutorials/07_tensor_core_gemm.py [--small]
"""
import sys
import time

import numpy as np

import tessel as ts

SMALL = "--small" in sys.argv
HAVE_GPU = ts.cuda_available()
N_CHECK = (128, 128, 64)  # m, n, k in the interpreter: one block of step 2
N_RUN = 2048 if SMALL else 4096

# Per input type: the mma intrinsic, its k, and the fragment loads from shared memory (B's with
# the width of the tile it loads: ldmatrix_b_trans_x4 loads two B fragments, 16 columns of n).
INTRINSICS = {
    "float16": ("mma_m16n8k16_f16", 16, "ldmatrix_a", ("ldmatrix_b_trans_x4", 16)),
    "bfloat16": ("mma_m16n8k16_bf16", 16, "ldmatrix_a", ("ldmatrix_b_trans_x4", 16)),
    "float32": ("mma_m16n8k8_tf32", 8, "load_a8", ("load_b8", 8)),
}
PLAIN_LOADS = {"float16": ("load_a16", ("load_b16", 8)),
               "bfloat16": ("load_a16", ("load_b16", 8)), "float32": ("load_a8", ("load_b8", 8))}


def gemm(m, n, k, dtype="float16"):
    A = ts.placeholder((m, k), dtype=dtype, name="A")
    B = ts.placeholder((k, n), dtype=dtype, name="B")
    r = ts.reduce_axis((0, k), name="k")
    if dtype == "float32":
        body = lambda i, j: ts.sum(A[i, r] * B[r, j], axis=r)
    else:
        body = lambda i, j: ts.sum(A[i, r].astype("float32") * B[r, j].astype("float32"), axis=r)
    C = ts.compute((m, n), body, name="C")
    return A, B, C


def tile_output(s, C, bm, bn, wm, wn, group=1):
    """C's loops: blocks of bm x bn, warps of wm x wn (threadIdx.z, .y), 16 x 8 fragments stored
    by store_c. group > 1 numbers the blocks down `group` block rows before the next block column
    (blockIdx.x = fused block column and row in the group), so that the blocks running at once
    share more of A's and B's tiles in L2. Returns the warp loop the accumulator is computed at."""
    i, j = C.op.axis
    bi, i = s[C].split(i, factor=bm)
    wi, i = s[C].split(i, factor=wm)
    fi, i = s[C].split(i, factor=16)
    bj, j = s[C].split(j, factor=bn)
    wj, j = s[C].split(j, factor=wn)
    fj, j = s[C].split(j, factor=8)
    if group > 1:
        bg, bi = s[C].split(bi, factor=group)
        s[C].reorder(bg, bj, bi, wi, wj, fi, fj, i, j)
        s[C].bind(bg, "blockIdx.y")
        s[C].bind(s[C].fuse(bj, bi), "blockIdx.x")
    else:
        s[C].reorder(bi, bj, wi, wj, fi, fj, i, j)
        s[C].bind(bi, "blockIdx.y")
        s[C].bind(bj, "blockIdx.x")
    s[C].bind(wi, "threadIdx.z")
    s[C].bind(wj, "threadIdx.y")
    s[C].unroll(fi)
    s[C].unroll(fj)
    s[C].tensorize(i, "store_c")
    return wj


def accumulate(s, CF, bk, kk, mma):
    """The accumulator's loops: k by bk (shared tiles) and kk (one mma), 16 x 8 fragments.
    Returns (k.outer, k.inner.outer)."""
    ci, cj = CF.op.axis
    (ck,) = CF.op.reduce_axis
    fi, ci = s[CF].split(ci, factor=16)
    fj, cj = s[CF].split(cj, factor=8)
    ko, ck = s[CF].split(ck, factor=bk)
    ki, ck = s[CF].split(ck, factor=kk)
    s[CF].reorder(ko, ki, fi, fj, ci, cj, ck)
    for loop in (ki, fi, fj):
        s[CF].unroll(loop)
    s[CF].tensorize(ci, mma)
    return ko, ki


def fragments(s, AF, BF, kk, load_a, load_b):
    """A's fragments: 16 x kk tiles; B's: kk x width tiles (B is k-major), load_b = (intrinsic,
    width)."""
    load_b, width = load_b
    ai, _ = AF.op.axis
    fa, ai = s[AF].split(ai, factor=16)
    s[AF].unroll(fa)
    s[AF].tensorize(ai, load_a)
    bk, bj = BF.op.axis
    fb, bj = s[BF].split(bj, factor=width)
    s[BF].reorder(fb, bk, bj)
    s[BF].unroll(fb)
    s[BF].tensorize(bk, load_b)


def copy_to_shared(s, T, warps, vector):
    """A cooperative copy of a 2-D tile by the block's 32 x warps threads, `vector` elements
    (128 bits) per access: the rows are split by the vector first, so that each access is one
    contiguous, aligned piece of a row."""
    a, b = s[T].op.axis
    b, v = s[T].split(b, factor=vector)
    t = s[T].fuse(a, b)
    t, x = s[T].split(t, factor=32)
    t, y = s[T].split(t, factor=warps[1])
    o, z = s[T].split(t, factor=warps[0])
    s[T].bind(x, "threadIdx.x")
    s[T].bind(y, "threadIdx.y")
    s[T].bind(z, "threadIdx.z")
    s[T].unroll(o)
    s[T].vectorize(v)


# ---------------------------------------------------------------------------------------------
# 1. Fragments, mma.sync, shared memory
#
# cache_write(C, "warp") is the accumulator: each warp's 64 x 64 tile of C as 4 x 8 fragments of
# 16 x 8 (128 floats per lane). A's 128 x 32 and B's 32 x 128 tiles are copied into shared
# memory by the block's 128 threads, 8 halves (128 bits) per load; cache_read(A.shared, "warp")
# and (B.shared, "warp") are the warp's fragments for 16 columns of k, loaded by each lane with
# plain loads (load_a16: the 8 elements PTX gives a lane of the A operand of mma.m16n8k16). The
# accumulator's innermost loops (16 x 8 x 16) become one mma.sync, its init fills the fragments
# with 0, and C's innermost 16 x 8 loops store them (store_c). The copies into shared memory
# bind threadIdx.x, the lanes: a tensorized stage needs a kernel whose threadIdx.x is 32.
def step1(m, n, k, dtype="float16"):
    return step2(m, n, k, dtype, ldmatrix=False)


# ---------------------------------------------------------------------------------------------
# 2. ldmatrix
#
# Each warp loads its fragments with ldmatrix, which reads 8 rows of 16 bytes per 8 x 8 matrix,
# one row address per lane, and hands every lane its elements (x4: four matrices, an A fragment;
# x4.trans: four matrices transposed, two B fragments of a k-major tile): one instruction where
# step 1 had 8 loads per lane. Shared memory has 32 banks of 4 bytes; rows of 64 (A) or 256 (B) bytes
# would put the 8 rows in the same banks, so each row is padded by 16 bytes (storage_align): 8
# rows, 8 different banks.
def step2(m, n, k, dtype="float16", bm=128, bn=128, bk=32, wm=64, wn=64, double_buffer=False,
          ldmatrix=True, pipeline=0, swizzle=False, group=1):
    mma, kk, load_a, load_b = INTRINSICS[dtype]
    if not ldmatrix:
        load_a, load_b = PLAIN_LOADS[dtype]
    A, B, C = gemm(m, n, k, dtype)
    s = ts.create_schedule(C)
    AS = s.cache_read(A, "shared", [C])
    BS = s.cache_read(B, "shared", [C])
    AF = s.cache_read(AS, "warp", [C])
    BF = s.cache_read(BS, "warp", [C])
    CF = s.cache_write(C, "warp")
    s[CF].compute_at(s[C], tile_output(s, C, bm, bn, wm, wn, group))
    ko, ki = accumulate(s, CF, bk, kk, mma)
    for T in (AF, BF):
        s[T].compute_at(s[CF], ki)
    fragments(s, AF, BF, kk, load_a, load_b)
    elem_bytes = 4 if dtype == "float32" else 2
    warps = (bm // wm, bn // wn)
    for T, row in ((AS, bk), (BS, bn)):
        s[T].compute_at(s[CF], ko)
        if swizzle:
            s[T].storage_swizzle()  # 16-byte chunks XOR the row's phase (step 5)
        elif ldmatrix:
            s[T].storage_align(0, row, 16 // elem_bytes)  # rows + 16 bytes
        copy_to_shared(s, T, warps, 16 // elem_bytes)
        if double_buffer:
            s[T].double_buffer()
        if pipeline:
            s[T].pipeline(pipeline)
    return s, [A, B, C]


# ---------------------------------------------------------------------------------------------
# 3. Double buffering
#
# While the warps multiply the current tiles, the next tiles' global loads are in flight: two
# copies of each shared tile, the next one loaded into registers before the mma.syncs and stored
# after them, one barrier per 32 columns of k (double_buffer, as in tutorial 5's step 6).
def step3(m, n, k, dtype="float16"):
    return step2(m, n, k, dtype, double_buffer=True)


# ---------------------------------------------------------------------------------------------
# 4. Pipelined copies (cp.async) and 128 x 256 tiles
#
# Step 3's double buffer stages the next tiles in registers (167 of them per thread, and issue
# slots for the loads and the stores into shared memory). pipeline(4) keeps four copies of each
# shared tile instead: the GPU's copy engine (cp.async, sm_80+) writes the tiles of the next three
# iterations straight from global into shared memory while this one computes, and the compiler
# places the waits and barriers. The registers saved pay for twice the tile: 8 warps of 64 x 64
# per block of 128 x 256. Each block reads (128 + 256) x 32 halves from L2 per 128 x 256 x 32
# multiply (85 FLOP per byte, against 64 for 128 x 128): on the H100 the L2 is the busiest unit
# of this kernel (Nsight Compute: 74 % of its throughput), so the larger tile is the one that
# pays. It is the largest a block can hold in registers (128 accumulators per thread).
def step4(m, n, k, dtype="float16", swizzle=False):
    bk = 16 if dtype == "float32" else 32  # 4 x 26 KB of shared tiles either way
    return step2(m, n, k, dtype, bn=256, bk=bk, pipeline=4, swizzle=swizzle)


# ---------------------------------------------------------------------------------------------
# 5. Swizzled shared tiles
#
# storage_swizzle lays each shared tile out so that the 16-byte chunk c of row r is stored at
# chunk c ^ ((r / per) % 8) of its row (rows narrower than 128 bytes share a phase in groups of
# per = 128 / row bytes: A's rows of 64 bytes have 4 phases of 2 rows, B's of 512 bytes 8 phases
# of 1): the 8 rows an ldmatrix reads at one column, and the 8 chunks a quarter warp copies, fall
# in 8 different 16-byte bank groups, with no padding. Every access goes through the same index
# function (the 16-byte cp.async copies and each lane's ldmatrix row address), so the interpreter
# checks the layout the GPU uses.
def step5(m, n, k, dtype="float16"):
    return step4(m, n, k, dtype, swizzle=True)


# ---------------------------------------------------------------------------------------------
# 6. k tiles of 64: half the barriers
#
# Every iteration of step 5's k loop waits for its tiles' copies and passes a barrier of the whole
# block before computing on 32 columns of k. On the H200 that synchronisation costs more than the
# memory traffic: a hand-written copy of this kernel that copies nothing after its first tiles
# runs at 0.68 x the register-only mma.sync peak with a barrier every 32 columns of k, 0.77 x
# with one every 64, and 0.84-0.91 x with none (benchmarks/experiments/hgemm_l2_bound.py). Tiles
# of 64 columns of k halve the barriers per multiply; their four copies take 192 KB of the
# 227 KB of shared memory a block may have on sm_90 (sm_80: 163 KB, so there the kernel does not
# launch; step 5 is the one for sm_80).
def step6(m, n, k, dtype="float16"):
    bk = 32 if dtype == "float32" else 64  # 4 x 48 KB of shared tiles either way
    return step2(m, n, k, dtype, bn=256, bk=bk, pipeline=4, swizzle=True)


STEPS = [
    ("1. fragments and mma.sync", step1, N_CHECK),
    ("2. ldmatrix", step2, N_CHECK),
    ("3. double buffering", step3, N_CHECK),
    ("4. pipelined copies, 128 x 256 tiles", step4, (128, 256, 128)),  # 4 iterations of k
    ("5. swizzled shared tiles", step5, (128, 256, 128)),
    ("6. k tiles of 64", step6, (128, 256, 256)),  # 4 iterations of k
]


def inputs(m, n, k, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    return a, b


def reference(a, b, dtype):
    if dtype == "float32":  # tf32: the inputs keep 10 mantissa bits (rounded to nearest)
        a, b = (tf32(x) for x in (a, b))
    return a.astype("float64") @ b.astype("float64")


def tf32(x):
    u = x.astype("float32").view("uint32")
    return ((u + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view("float32")


def check_in_interpreter(make, shape=N_CHECK, dtype="float16"):
    """Runs make's schedule in the loop interpreter (SPMD, warps, race detector)."""
    m, n, k = shape
    s, args = make(m, n, k, dtype)
    a, b = inputs(m, n, k, dtype, seed=1)
    c = np.full((m, n), np.nan, dtype="float32")
    ts.lower(s, args).run(a, b, c)
    np.testing.assert_allclose(c, reference(a, b, dtype), rtol=2e-3, atol=2e-3)


def run_on_gpu(make, n, dtype="float16"):
    """Builds for the GPU, checks against numpy, returns TFLOP/s (median of 20 runs)."""
    s, args = make(n, n, n, dtype)
    f = ts.build(s, args, target="cuda")
    a, b = inputs(n, n, n, dtype, seed=2)
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


if __name__ == "__main__":
    for title, make, check_shape in STEPS:
        check_in_interpreter(make, check_shape)
        s, args = make(N_RUN, N_RUN, N_RUN)
        for arch in ("sm_80", "sm_90"):
            if make is step6 and arch == "sm_80":  # 192 KB of shared tiles: more than sm_80 has
                try:
                    ts.build(s, args, target="cuda -arch=sm_80")
                    raise AssertionError("step 6 built for sm_80")
                except ts.ScheduleError as e:
                    assert "bytes of shared memory per block" in str(e), e
                continue
            module = ts.build(s, args, target="cuda -arch=" + arch)  # NVRTC, with or without a GPU
            ptx = module.get_source("ptx")
            assert "mma.sync.aligned.m16n8k16" in ptx
            if make in (step5, step6):  # 16-byte asynchronous copies, ldmatrix, swizzled tiles
                assert "cp.async.cg.shared.global" in ptx and "ldmatrix.sync.aligned" in ptx
        if HAVE_GPU:
            tflops, f = run_on_gpu(make, N_RUN)
            print(f"{title}: correct, {tflops:7.1f} TFLOP/s at n={N_RUN}")
        else:
            archs = "sm_90 (sm_80: too little shared memory)" if make is step6 else \
                "sm_80 and sm_90"
            print(f"{title}: correct in the interpreter, compiles for {archs} (no GPU here: "
                  f"{ts.cuda_unavailable_reason()})")
    report = module.get_source("nvrtc_log").splitlines()
    print("\n".join(line for line in report if "Used" in line or "spill" in line))

    # The same schedule with float32 inputs on tf32 tensor cores (checked in the interpreter),
    # and with bfloat16 inputs (numpy has no bfloat16: tests/correctness/spmd_tensor_core_test
    # checks its mma.sync in the interpreter).
    check_in_interpreter(step2, dtype="float32")
    check_in_interpreter(step5, (128, 256, 64), "float32")  # swizzled fp32 tiles (k tiles of 16)
    for dtype in ("float32", "bfloat16"):
        s, args = step4(N_RUN, N_RUN, N_RUN, dtype)
        ptx = ts.build(s, args, target="cuda -arch=sm_80").get_source("ptx")
        assert "mma.sync.aligned" in ptx
        print(f"step 4 with {dtype} inputs: compiles for sm_80")
