# TVM <= 0.19 tensor-expression scripts, written as TVM's walk-throughs write them (CPU GEMM from
# blocking to parallel, a shared-memory GPU convolution with virtual threads, reductions with
# rfactor and cross-thread reductions, symbolic shapes), run after `import tessel as tvm` and
# checked against numpy. GPU schedules run in the loop interpreter as SPMD programs (race detector
# on) and compile through NVRTC; on a GPU host they also run on the GPU.
import numpy as np
import pytest

import tessel as tvm
from tessel import te

from util import HAVE_LLVM, requires_llvm

HAVE_CUDA_CODEGEN = "cuda" in tvm.targets()

# --- CPU GEMM (TVM's "How to optimize GEMM on CPU", at a test's size) -------------------------

M = N = K = 128
bn, kfactor = 32, 4
dtype = "float32"


def gemm_inputs():
    rng = np.random.default_rng(0)
    a = rng.random((M, K), dtype=np.float32)
    b = rng.random((K, N), dtype=np.float32)
    return a, b, a @ b


def gemm():
    k = te.reduce_axis((0, K), "k")
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    C = te.compute((M, N), lambda m, n: te.sum(A[m, k] * B[k, n], axis=k), name="C")
    return A, B, C


def packed_gemm():
    k = te.reduce_axis((0, K), "k")
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    packedB = te.compute((N // bn, K, bn), lambda bigN, k, littleN: B[k, bigN * bn + littleN],
                         name="packedB")
    C = te.compute(
        (M, N),
        lambda m, n: te.sum(A[m, k] * packedB[n // bn, k, tvm.tir.indexmod(n, bn)], axis=k),
        name="C")
    return A, B, C, packedB


def run_gemm(s, A, B, C):
    a_np, b_np, answer = gemm_inputs()
    target = "llvm"
    dev = tvm.device(target, 0)
    func = tvm.build(s, [A, B, C], target=target, name="mmult")
    a = tvm.nd.array(a_np, dev)
    b = tvm.nd.array(b_np, dev)
    c = tvm.nd.array(np.zeros((M, N), dtype=dtype), dev)
    func(a, b, c)
    tvm.testing.assert_allclose(c.numpy(), answer, rtol=1e-5)
    evaluator = func.time_evaluator(func.entry_name, dev, number=2)
    assert evaluator(a, b, c).mean > 0
    return func


def schedule_default():
    A, B, C = gemm()
    return te.create_schedule(C.op), (A, B, C)


def schedule_blocking():
    A, B, C = gemm()
    s = te.create_schedule(C.op)
    mo, no, mi, ni = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
    (kaxis,) = s[C].op.reduce_axis
    ko, ki = s[C].split(kaxis, factor=kfactor)
    s[C].reorder(mo, no, ko, ki, mi, ni)
    return s, (A, B, C)


def schedule_vectorization():
    s, (A, B, C) = schedule_blocking()
    mo, no, ko, ki, mi, ni = s[C].leaf_iter_vars
    s[C].vectorize(ni)
    return s, (A, B, C)


def schedule_permutation():
    A, B, C = gemm()
    s = te.create_schedule(C.op)
    mo, no, mi, ni = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
    (kaxis,) = s[C].op.reduce_axis
    ko, ki = s[C].split(kaxis, factor=kfactor)
    s[C].reorder(mo, no, ko, mi, ki, ni)
    s[C].vectorize(ni)
    return s, (A, B, C)


def schedule_packing():
    A, B, C, packedB = packed_gemm()
    s = te.create_schedule(C.op)
    mo, no, mi, ni = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
    (kaxis,) = s[C].op.reduce_axis
    ko, ki = s[C].split(kaxis, factor=kfactor)
    s[C].reorder(mo, no, ko, mi, ki, ni)
    s[C].vectorize(ni)
    bigN, _, littleN = s[packedB].op.axis
    s[packedB].vectorize(littleN)
    s[packedB].parallel(bigN)
    return s, (A, B, C)


def schedule_write_cache(parallel=False):
    A, B, C, packedB = packed_gemm()
    s = te.create_schedule(C.op)
    CC = s.cache_write(C, "global")
    mo, no, mi, ni = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
    s[CC].compute_at(s[C], no)
    mc, nc = s[CC].op.axis
    (kaxis,) = s[CC].op.reduce_axis
    ko, ki = s[CC].split(kaxis, factor=kfactor)
    s[CC].reorder(ko, mc, ki, nc)
    s[CC].vectorize(nc)  # 128 declared, bn inside the attach point
    s[CC].unroll(ki)
    if parallel:
        s[C].parallel(mo)
    bigN, _, littleN = s[packedB].op.axis
    s[packedB].vectorize(littleN)
    s[packedB].parallel(bigN)
    return s, (A, B, C)


@requires_llvm
@pytest.mark.parametrize("step", [
    schedule_default, schedule_blocking, schedule_vectorization, schedule_permutation,
    schedule_packing, schedule_write_cache, lambda: schedule_write_cache(parallel=True)],
    ids=["default", "blocking", "vectorization", "permutation", "packing", "write_cache",
         "parallel"])
def test_cpu_gemm_walkthrough(step):
    s, (A, B, C) = step()
    text = str(tvm.lower(s, [A, B, C], simple_mode=True))
    assert "C" in text
    run_gemm(s, A, B, C)


def test_write_cache_vectorizes_inside_the_tile():
    s, (A, B, C) = schedule_write_cache()
    text = str(tvm.lower(s, [A, B, C], simple_mode=True))
    assert "float32x32" in text or "ramp" in text.lower(), text  # nc is 32 lanes there


# --- A shared-memory GPU convolution with virtual threads (TVM's "How to optimize convolution
# on GPU", HWCN layout, at a test's size) -------------------------------------------------------

def gpu_conv(batch=8, in_channel=4, out_channel=8, in_size=5, kernel=3, pad=1, stride=1,
             tile=2, num_thread=2, step=2, vthread=2):
    A = te.placeholder((in_size, in_size, in_channel, batch), name="A")
    W = te.placeholder((kernel, kernel, in_channel, out_channel), name="W")
    out_size = (in_size - kernel + 2 * pad) // stride + 1
    Apad = te.compute(
        (in_size + 2 * pad, in_size + 2 * pad, in_channel, batch),
        lambda yy, xx, cc, nn: tvm.tir.if_then_else(
            tvm.tir.all(yy >= pad, yy - pad < in_size, xx >= pad, xx - pad < in_size),
            A[yy - pad, xx - pad, cc, nn], tvm.tir.const(0.0, "float32")),
        name="Apad")
    rc = te.reduce_axis((0, in_channel), name="rc")
    ry = te.reduce_axis((0, kernel), name="ry")
    rx = te.reduce_axis((0, kernel), name="rx")
    B = te.compute(
        (out_size, out_size, out_channel, batch),
        lambda yy, xx, ff, nn: te.sum(
            Apad[yy * stride + ry, xx * stride + rx, rc, nn] * W[ry, rx, rc, ff],
            axis=[ry, rx, rc]),
        name="B")

    s = te.create_schedule(B.op)
    s[Apad].compute_inline()
    AA = s.cache_read(Apad, "shared", [B])
    WW = s.cache_read(W, "shared", [B])
    AL = s.cache_read(AA, "local", [B])
    WL = s.cache_read(WW, "local", [B])
    BL = s.cache_write(B, "local")

    block_factor = tile * num_thread
    block_x = te.thread_axis("blockIdx.x")
    block_y = te.thread_axis("blockIdx.y")
    block_z = te.thread_axis("blockIdx.z")
    thread_x = te.thread_axis((0, num_thread), "threadIdx.x")
    thread_y = te.thread_axis((0, num_thread), "threadIdx.y")
    thread_xz = te.thread_axis((0, vthread), "vthread", name="vx")
    thread_yz = te.thread_axis((0, vthread), "vthread", name="vy")

    hi, wi, fi, ni = s[B].op.axis
    bz = s[B].fuse(hi, wi)
    by, fi = s[B].split(fi, factor=block_factor)
    bx, ni = s[B].split(ni, factor=block_factor)
    s[B].bind(bz, block_z)
    s[B].bind(by, block_y)
    s[B].bind(bx, block_x)
    tyz, fi = s[B].split(fi, nparts=vthread)  # virtual thread split
    txz, ni = s[B].split(ni, nparts=vthread)
    ty, fi = s[B].split(fi, nparts=num_thread)
    tx, ni = s[B].split(ni, nparts=num_thread)
    s[B].reorder(bz, by, bx, tyz, txz, ty, tx, fi, ni)
    s[B].bind(tyz, thread_yz)
    s[B].bind(txz, thread_xz)
    s[B].bind(ty, thread_y)
    s[B].bind(tx, thread_x)

    s[BL].compute_at(s[B], tx)
    yi, xi, fi, ni = s[BL].op.axis
    ry, rx, rc = s[BL].op.reduce_axis
    rco, rci = s[BL].split(rc, factor=step)
    s[BL].reorder(rco, ry, rx, rci, fi, ni)
    s[AA].compute_at(s[BL], rx)
    s[WW].compute_at(s[BL], rx)
    s[AL].compute_at(s[BL], rci)
    s[WL].compute_at(s[BL], rci)

    # A's shared tile: a cooperative fetch by the block's threads
    yi, xi, ci, ni = s[AA].op.axis
    ty, ci = s[AA].split(ci, nparts=num_thread)
    tx, ni = s[AA].split(ni, nparts=num_thread)
    _, ni = s[AA].split(ni, factor=2)
    s[AA].reorder(ty, tx, yi, xi, ci, ni)
    s[AA].bind(ty, thread_y)
    s[AA].bind(tx, thread_x)
    s[AA].vectorize(ni)
    # W's shared tile
    yi, xi, ci, fi = s[WW].op.axis
    ty, ci = s[WW].split(ci, nparts=num_thread)
    tx, fi = s[WW].split(fi, nparts=num_thread)
    _, fi = s[WW].split(fi, factor=2)
    s[WW].reorder(ty, tx, yi, xi, ci, fi)
    s[WW].bind(ty, thread_y)
    s[WW].bind(tx, thread_x)
    s[WW].vectorize(fi)
    return s, (A, W, B), (pad, stride)


def conv_reference(a, w, pad, stride):
    in_size, _, in_channel, batch = a.shape
    kernel, _, _, out_channel = w.shape
    ap = np.pad(a, ((pad, pad), (pad, pad), (0, 0), (0, 0)))
    out = (in_size - kernel + 2 * pad) // stride + 1
    b = np.zeros((out, out, out_channel, batch), "float32")
    for ry in range(kernel):
        for rx in range(kernel):
            patch = ap[ry:ry + out * stride:stride, rx:rx + out * stride:stride]  # y x c n
            b += np.einsum("yxcn,cf->yxfn", patch, w[ry, rx])
    return b


def test_gpu_conv_with_virtual_threads():
    s, (A, W, B), (pad, stride) = gpu_conv()
    rng = np.random.default_rng(3)
    a = rng.random([int(d) for d in A.shape], dtype=np.float32)
    w = rng.random([int(d) for d in W.shape], dtype=np.float32)
    answer = conv_reference(a, w, pad, stride)
    b = np.full([int(d) for d in B.shape], np.nan, dtype="float32")
    lowered = tvm.lower(s, [A, W, B], simple_mode=True)
    assert "(shared)" in str(lowered) and "vthread" not in str(lowered).split("def")[0]
    lowered.run(a, w, b)  # SPMD, race detector on
    tvm.testing.assert_allclose(b, answer, rtol=1e-4, atol=1e-5)
    if not HAVE_CUDA_CODEGEN:
        pytest.skip("tessel was built without the CUDA backend")
    with tvm.target.Target("cuda -arch=sm_90") as target:
        func = tvm.build(s, [A, W, B], target)
    assert "__syncthreads()" in func.get_source("cu")
    dev = tvm.cuda(0)
    if not dev.exist:
        return
    a_d, w_d = tvm.nd.array(a, dev), tvm.nd.array(w, dev)
    b_d = tvm.nd.array(np.zeros_like(b), dev)
    func(a_d, w_d, b_d)
    tvm.testing.assert_allclose(b_d.numpy(), answer, rtol=1e-4, atol=1e-5)
    evaluator = func.time_evaluator(func.entry_name, dev, number=1)
    assert evaluator(a_d, w_d, b_d).mean > 0


# --- Reductions (TVM's "Reduction" walk-through): rfactor, cross-thread reductions, symbolic
# shapes ----------------------------------------------------------------------------------------

def row_sum():
    n = te.var("n")
    m = te.var("m")
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    return n, m, A, B


@requires_llvm
def test_rfactor_on_symbolic_shapes():
    n, m, A, B = row_sum()
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(B.op.reduce_axis[0], factor=16)
    BF = s.rfactor(B, ki)
    assert tuple(BF.shape)[0] == 16
    xo, xi = s[B].split(s[B].op.axis[0], factor=4)
    s[B].parallel(xo)
    func = tvm.build(s, [A, B, n, m], "llvm")  # TVM scripts list the shape Vars: dropped
    dev = tvm.cpu(0)
    for rows, cols in ((7, 100), (12, 35)):
        a = tvm.nd.array(np.random.default_rng(rows).random((rows, cols), dtype=np.float32), dev)
        b = tvm.nd.array(np.zeros(rows, dtype="float32"), dev)
        func(a, b)
        tvm.testing.assert_allclose(b.numpy(), a.numpy().sum(axis=1), rtol=1e-5)


def test_cross_thread_reduction():
    n, m, A, B = 16, 64, *row_sum()[2:]
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(B.op.reduce_axis[0], factor=16)
    BF = s.rfactor(B, ki)
    xo, xi = s[B].split(s[B].op.axis[0], factor=4)
    s[B].bind(xo, te.thread_axis("blockIdx.x"))
    s[B].bind(xi, te.thread_axis("threadIdx.y"))
    tx = s[B].op.reduce_axis[0]
    thread_x = te.thread_axis("threadIdx.x")
    s[B].bind(tx, thread_x)
    s[BF].compute_at(s[B], tx)
    # TVM's s[B].set_store_predicate(thread_x.var.equal(0)) is tessel's default: the threads at
    # index 0 of the reduction's thread axes store the result.
    a = np.random.default_rng(5).random((n, m), dtype=np.float32)
    b = np.full(n, np.nan, dtype="float32")
    tvm.lower(s, [A, B]).run(a, b)
    tvm.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)
    if HAVE_CUDA_CODEGEN:
        func = tvm.build(s, [A, B], target="cuda -arch=sm_90")
        assert "__shfl" in func.get_source("cu") or "__syncthreads" in func.get_source("cu")


@requires_llvm
def test_symbolic_shape_elementwise():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute(A.shape, lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    outer, inner = s[C].split(C.op.axis[0], factor=8)
    s[C].vectorize(inner)
    fadd = tvm.build(s, [A, B, C], tvm.target.Target("llvm"), name="myadd")
    assert fadd.entry_name == "myadd"
    dev = tvm.device("llvm")
    for size in (1, 8, 1027):
        a = tvm.nd.array(np.random.default_rng(size).random(size, dtype=np.float32), dev)
        b = tvm.nd.array(np.random.default_rng(size + 1).random(size, dtype=np.float32), dev)
        c = tvm.nd.array(np.zeros(size, dtype="float32"), dev)
        fadd(a, b, c)
        tvm.testing.assert_allclose(c.numpy(), a.numpy() + b.numpy())


@requires_llvm
def test_softmax_compute_at_in_tvm_order():
    m, n = 6, 33
    X = te.placeholder((m, n), name="X")
    k = te.reduce_axis((0, n), name="k")
    Mx = te.compute((m,), lambda i: te.max(X[i, k], axis=k), name="M")
    k2 = te.reduce_axis((0, n), name="k2")
    S = te.compute((m,), lambda i: te.sum(te.exp(X[i, k2] - Mx[i]), axis=k2), name="S")
    Y = te.compute((m, n), lambda i, j: te.exp(X[i, j] - Mx[i]) / S[i], name="Y")
    s = te.create_schedule(Y.op)
    i, j = s[Y].op.axis
    s[Mx].compute_at(s[Y], i)  # S, M's other reader, is attached after it (as TVM allows)
    s[S].compute_at(s[Y], i)
    f = tvm.build(s, [X, Y])
    x = np.random.default_rng(2).standard_normal((m, n)).astype("float32")
    y = tvm.nd.array(np.zeros((m, n), "float32"))
    f(tvm.nd.array(x), y)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    tvm.testing.assert_allclose(y.numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5)
    # Left incomplete, it fails when it is lowered, naming both stages.
    s2 = te.create_schedule(Y.op)
    s2[Mx].compute_at(s2[Y], s2[Y].op.axis[0])
    with pytest.raises(tvm.ScheduleError, match="'M' is computed at 'Y'.*reader 'S'"):
        tvm.lower(s2, [X, Y], simple_mode=True)


def test_pass_context_and_target_context_are_accepted():
    A, B, C = gemm()
    s = te.create_schedule([C.op])
    with tvm.transform.PassContext(opt_level=3):
        text = str(tvm.lower(s, [A, B, C], simple_mode=True))
    assert "for" in text
    with pytest.raises(TypeError, match="'config' is not supported"):
        tvm.transform.PassContext(config={"tir.disable_vectorize": True})
