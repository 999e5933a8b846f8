# Tensor cores by default (docs/operators.md, "Tensor cores"): float16 and bfloat16 matmul and
# batch_matmul under ts.op.default_schedule on cuda sm_80+ run on mma.sync at any m, n and k (a
# shared epilogue for edges, zero-padded k tiles), checked in the SPMD interpreter (warps with
# PTX's fragment layouts, race detector on) against numpy, and compiled by NVRTC.

import ml_dtypes
import numpy as np
import pytest

import tessel as ts
from tessel import op
from util import tutorial

SM90 = "cuda -arch=sm_90"


def product(shape_a, shape_b, dtype, out_dtype=None, epilogue=None, transpose_b=False):
    a = ts.placeholder(shape_a, dtype=dtype, name="a")
    b = ts.placeholder(shape_b, dtype=dtype, name="b")
    if len(shape_a) == 3:
        y = op.batch_matmul(a, b, transpose_b=transpose_b, out_dtype=out_dtype)
    else:
        y = op.matmul(a, b, transpose_b=transpose_b, out_dtype=out_dtype)
    if epilogue:
        y = epilogue(y)
    return a, b, y


def inputs(shape_a, shape_b, dtype, seed=0):
    npdt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, shape_a).astype(npdt), rng.uniform(-1, 1, shape_b).astype(npdt))


def check(shape_a, shape_b, dtype="float16", out_dtype=None, epilogue=None, np_epilogue=None,
          target=SM90, instruction="mma_sync"):
    a, b, y = product(shape_a, shape_b, dtype, out_dtype, epilogue)
    s = op.default_schedule(y, ts.Target(target))
    f = ts.lower(s, [a, b, y])
    assert instruction in str(f)
    va, vb = inputs(shape_a, shape_b, dtype)
    ref = np.matmul(va.astype(np.float64), vb.astype(np.float64))
    if np_epilogue:
        ref = np_epilogue(ref)
    out_np = np.float32 if out_dtype == "float32" else va.dtype
    out = np.full(ref.shape, np.nan, dtype=out_np)
    f.run(va, vb, out)
    # float32 accumulation; a 16-bit output is rounded once (bfloat16: 8 bits of mantissa)
    tol = 1e-5 if out_dtype == "float32" else (1e-2 if dtype == "bfloat16" else 1e-3)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=tol, atol=tol * 8)
    return s, [a, b, y]


@pytest.mark.parametrize("m,n,k", [(128, 128, 64), (100, 70, 48), (64, 66, 71), (37, 50, 33),
                                   (16, 16, 16)], ids=str)
def test_fp16_matmul_default_runs_on_tensor_cores_at_any_shape(m, n, k):
    check((m, k), (k, n))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_float32_output_and_bfloat16(dtype):
    check((48, 40), (40, 77), dtype, out_dtype="float32")
    check((96, 72), (72, 40), dtype)


def test_batch_matmul_and_an_epilogue():
    check((2, 37, 33), (2, 33, 50), epilogue=op.relu, np_epilogue=lambda r: np.maximum(r, 0))
    check((3, 64, 32), (3, 32, 256))
    check((1, 40, 48), (3, 48, 24))  # a batch of one broadcasts


def test_direct_store_when_tiles_divide():
    """Divisible tiles store the fragments straight into the output (no shared epilogue): the
    fp16 output converts on the way out."""
    s, args = check((128, 128), (128, 128))
    assert "matmul.acc.warp" not in str(ts.lower(s, args))  # the product is the accumulator
    s_edge, args_edge = check((100, 128), (128, 128))
    assert "matmul.acc.warp" in str(ts.lower(s_edge, args_edge))  # shared tile, then copied out
    cu = ts.build(s, args, target=SM90).get_source("cu")
    assert "mma.sync" in cu and "cp.async" in cu


def test_shared_epilogue_stores_its_fragments_without_barriers_between_them():
    """The fragments a warp stores into the shared epilogue's tile are written, not read: no
    barrier between one fragment store and the next (there was one before each), one before the
    tile is copied out. Checked in the interpreter too (its race detector on)."""
    s, args = check((100, 128), (128, 128))
    lines = str(ts.lower(s, args, target=SM90, stop_after="insert_barriers")).splitlines()
    store = next(k for k, line in enumerate(lines) if "fragment_store(" in line)
    assert lines[store - 1].strip().startswith("for ") and "unrolled" in lines[store - 1]
    assert any("thread_barrier()" in line for line in lines[store:])  # before the copy out


def test_nvrtc_compiles_the_defaults_for_sm80_and_sm90():
    for arch, dtype in (("sm_80", "float16"), ("sm_90", "bfloat16")):
        for shape_a, shape_b in (((4096, 4096), (4096, 4096)), ((1536, 777), (777, 1000)),
                                 ((12, 128, 128), (12, 128, 64))):
            a, b, y = product(shape_a, shape_b, dtype)
            target = "cuda -arch=" + arch
            ptx = ts.build(op.default_schedule(y, ts.Target(target)), [a, b, y],
                           target=target).get_source("ptx")
            assert f"mma.sync.aligned.m16n8k16.row.col.f32.{'f16' if dtype == 'float16' else 'bf16'}" in ptx
            assert "ldmatrix.sync.aligned.m8n8.x4" in ptx


def check_transposed_b(shape_a, shape_b, dtype="float16", dense=False, target=SM90,
                       instruction="mma_sync"):
    """matmul / batch_matmul with transpose_b, or dense (+ bias + GELU): B read [n][k], its
    fragments loaded by plain ldmatrix into B16T buffers (mma ..._bt)."""
    a, b, _ = product(shape_a, shape_b, dtype, transpose_b=True)
    va, vb = inputs(shape_a, shape_b, dtype)
    ref = np.matmul(va.astype(np.float64), np.swapaxes(vb, -1, -2).astype(np.float64))
    args, arrays = [a, b], [va, vb]
    if dense:
        bias = ts.placeholder((shape_b[0],), dtype=dtype, name="bias")
        vbias = inputs((shape_b[0],), (1,), dtype, seed=2)[0]
        y = op.dense(a, b, bias, activation="relu")
        ref = np.maximum(ref + vbias.astype(np.float64), 0)
        args.append(bias)
        arrays.append(vbias)
    elif len(shape_a) == 3:
        y = op.batch_matmul(a, b, transpose_b=True)
    else:
        y = op.matmul(a, b, transpose_b=True)
    s = op.default_schedule(y, ts.Target(target))
    f = ts.lower(s, args + [y])
    assert instruction in str(f)
    out = np.full(ref.shape, np.nan, dtype=va.dtype)
    f.run(*arrays, out)
    tol = 1e-2 if dtype == "bfloat16" else 1e-3
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=tol, atol=tol * 8)
    ptx = ts.build(s, args + [y], target=target).get_source("ptx")
    if instruction == "mma_sync":
        assert "mma.sync.aligned.m16n8k16" in ptx and "ldmatrix.sync.aligned.m8n8.x4.shared" in ptx
    return ptx


@pytest.mark.parametrize("shape_a,shape_b", [((64, 48), (32, 48)), ((100, 70), (66, 70)),
                                             ((2, 37, 33), (2, 50, 33)), ((12, 32, 64), (12, 32, 64))],
                         ids=str)
def test_transposed_b_runs_on_tensor_cores(shape_a, shape_b):
    check_transposed_b(shape_a, shape_b)


def test_dense_with_bias_and_activation_on_tensor_cores():
    check_transposed_b((40, 64), (48, 64), dense=True)
    check_transposed_b((33, 80), (24, 80), "bfloat16", dense=True)


def test_other_products_keep_the_cuda_core_default():
    """sm_75 has no mma.m16n8k16 path here and float32 stays on CUDA cores (TF32 is an opt-in):
    neither uses mma."""
    for target, dtype, tb in (("cuda -arch=sm_75", "float16", False), (SM90, "float32", True),
                              (SM90, "float32", False)):
        a, b, y = product((64, 64), (64, 64), dtype, transpose_b=tb)
        lowered = str(ts.lower(op.default_schedule(y, ts.Target(target)), [a, b, y]))
        assert "mma_sync" not in lowered


def shifted_gemm(k, shift_b, bound=None):
    """Tutorial 07's step 2 kernel (bk = 16) of (A + 1) B, or of (A + 1) (B + 1): the shifts
    inlined into the shared copies; `bound`: the sum only where k < bound."""
    tc = tutorial("07_tensor_core_gemm")
    m = n = 128
    A = ts.placeholder((m, k), dtype="float16", name="A")
    B = ts.placeholder((k, n), dtype="float16", name="B")
    A2 = ts.compute((m, k), lambda i, j: A[i, j] + ts.const(1, "float16"), name="A2")
    B2 = ts.compute((k, n), lambda i, j: B[i, j] + ts.const(1, "float16"), name="B2")
    r = ts.reduce_axis((0, k), name="k")
    C = ts.compute((m, n), lambda i, j: ts.sum(A2[i, r].astype("float32") *
                                                (B2 if shift_b else B)[r, j].astype("float32"),
                                                axis=r, where=None if bound is None else r < bound),
                   name="C")
    s = ts.create_schedule(C)
    AS = s.cache_read(A2, "shared", [C])
    s[A2].compute_inline()
    if shift_b:
        BS = s.cache_read(B2, "shared", [C])
        s[B2].compute_inline()
    else:
        BS = s.cache_read(B, "shared", [C])
    AF = s.cache_read(AS, "warp", [C])
    BF = s.cache_read(BS, "warp", [C])
    CF = s.cache_write(C, "warp")
    s[CF].compute_at(s[C], tc.tile_output(s, C, 128, 128, 64, 64))
    ko, ki = tc.accumulate(s, CF, 16, 16, "mma_m16n8k16_f16")
    for T in (AF, BF):
        s[T].compute_at(s[CF], ki)
    tc.fragments(s, AF, BF, 16, "ldmatrix_a", ("ldmatrix_b_trans_x4", 16))
    for T in (AS, BS):
        s[T].compute_at(s[CF], ko)
        tc.copy_to_shared(s, T, (2, 2), 8)
    return s, [A, B, C]


def test_padded_reduction_needs_a_zero_padded_operand():
    """An mma's reduction runs whole k tiles past k where one operand's tile is a plain copy
    (zero past k): (A + 1) B at k = 40 in k tiles of 16 is right, its padded products (A + 1) * 0.
    With both operands shifted, (A + 1) (B + 1), the padding would add 1 * 1: the reduction keeps
    its guard and tensorize refuses it, a clear error, never a wrong sum."""
    for k in (48, 40):
        s, args = shifted_gemm(k, shift_b=False)
        va, vb = inputs((128, k), (k, 128), "float16")
        out = np.full((128, 128), np.nan, dtype=np.float32)
        ts.lower(s, args).run(va, vb, out)
        ref = (va.astype(np.float64) + 1) @ vb.astype(np.float64)
        np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-2)
    ts.lower(*shifted_gemm(48, shift_b=True))
    with pytest.raises(ts.ScheduleError, match="guarded"):
        ts.lower(*shifted_gemm(40, shift_b=True))


def kernels(s, args):
    return ts.build(s, args, target=SM90).get_source("cu").count("__global__")


def test_dependent_launches_on_sm_90_are_asked_for(monkeypatch):
    """Split-K's two kernels for sm_90 become programmatic dependent launches (docs/cuda.md,
    "From schedule to launch") with TESSEL_CUDA_DEPENDENT_LAUNCH=1 when built: the product lets
    the sum start, the sum waits for the product; without it, or for sm_80, neither."""
    a, b, y = product((16, 512), (512, 64), "float16")

    def source(target):
        s = op.default_schedule(y, ts.Target(target))
        return ts.build(s, [a, b, y], target=target).get_source("cu")

    monkeypatch.delenv("TESSEL_CUDA_DEPENDENT_LAUNCH", raising=False)
    assert "griddepcontrol" not in source(SM90)
    monkeypatch.setenv("TESSEL_CUDA_DEPENDENT_LAUNCH", "1")
    cu = source(SM90)
    product_kernel, sum_kernel = cu.split("// stage ")[1:]
    assert "griddepcontrol.launch_dependents" in product_kernel
    assert "griddepcontrol.wait" not in product_kernel
    assert "griddepcontrol.wait" in sum_kernel
    assert "griddepcontrol.launch_dependents" not in sum_kernel
    assert "griddepcontrol" not in source("cuda -arch=sm_80")


@pytest.mark.parametrize("m,n,k,epilogue", [(16, 64, 512, None), (20, 40, 1024, "relu"),
                                            (24, 24, 1000, None)], ids=str)
def test_split_k_fills_the_gpu_when_the_tiles_cannot(m, n, k, epilogue):
    """A few output tiles over a long k (one block for 132 multiprocessors) split k into parts:
    a batch of partial products on the tensor cores (rfactor), then a kernel summing the parts
    with the consumer's element-wise work. At k = 1000 the last of four 256-long parts runs past
    k: its bound is dropped because the operands' shared copies read zero there."""
    relu = (op.relu, lambda r: np.maximum(r, 0)) if epilogue else (None, None)
    s, args = check((m, k), (k, n), epilogue=relu[0], np_epilogue=relu[1])
    lowered = str(ts.lower(s, args))
    assert ".rf" in lowered and "mma_sync" in lowered
    assert kernels(s, args) == 2
    # Enough tiles (or a short k) keep one kernel.
    s, args = check((256, 64), (64, 256))
    assert kernels(s, args) == 1


def test_split_k_with_a_transposed_b():
    check_transposed_b((16, 512), (32, 512), dense=True)


def test_a_bounded_reduction_runs_on_tensor_cores_only_where_the_padding_is_zero():
    """A sum over k < bound (split-K's last part has one) matches the mma, which cannot check
    it: lowering drops the bound where an operand read at that index reads zero past it (B's
    plain copy, B ending at the bound), and refuses it otherwise, never a wrong sum."""
    s, args = shifted_gemm(40, shift_b=False, bound=40)
    va, vb = inputs((128, 40), (40, 128), "float16")
    out = np.full((128, 128), np.nan, dtype=np.float32)
    ts.lower(s, args).run(va, vb, out)
    np.testing.assert_allclose(out, (va.astype(np.float64) + 1) @ vb.astype(np.float64),
                               rtol=1e-3, atol=1e-2)
    # B goes on past the bound (real values there), and A's copy computes A + 1.
    for k, shift_b in ((48, False), (48, True)):
        with pytest.raises(ts.ScheduleError, match="which the mma cannot check"):
            ts.lower(*shifted_gemm(k, shift_b=shift_b, bound=40))


def test_rows_of_an_odd_length_are_copied_once_into_padded_rows():
    """cp.async copies 4 to 16 bytes from aligned addresses, so an operand whose rows have an
    odd length (A at k = 71, B at n = 67) is first copied whole into a global buffer whose rows
    are padded to 16 bytes, before the product's kernel (the two copies, independent, one
    kernel); its tiles then copy 16 bytes at a time from there, and at the row's end cp.async
    copies only the bytes inside (the rest zero-filled)."""
    s, args = check((64, 71), (71, 67))
    cu = ts.build(s, args, target=SM90).get_source("cu")
    assert cu.count("__global__") == 2  # the two padded copies (one kernel), the product
    assert "a_global[" in cu.split("__global__")[1] and "b_global[" in cu.split("__global__")[1]
    assert "a_global_shared" in cu and "b_global_shared" in cu
    assert "cp.async.cg.shared.global [%0], [%1], 16, %2" in cu  # the zero-filled edge
    # Rows of an even length are copied where they lie (cp.async of 4 bytes at n = 66).
    s, args = check((64, 72), (72, 66))
    assert ts.build(s, args, target=SM90).get_source("cu").count("__global__") == 1
    # dense's weight (n x k, k odd), a batch, bfloat16.
    check_transposed_b((37, 45), (50, 45), dense=True)
    check((2, 37, 33), (2, 33, 50), "bfloat16")


# sm_90a (plain "cuda" on a Hopper GPU): products that fill the SMs with whole 128 x 256 tiles
# run tutorial 08's wgmma kernel; smaller ones keep mma.sync. The choice weighs the tiles against
# the SM count: the checks in the interpreter take a GPU of 4 or 8 SMs (-num-cores), so that the
# products they run are a thirtieth of those that fill 132 SMs.
SM90A_4 = "cuda -arch=sm_90a -num-cores=4"


@pytest.mark.parametrize("dtype,out_dtype", [("float16", None), ("bfloat16", "float32")])
def test_sm_90a_default_runs_large_products_on_wgmma(dtype, out_dtype):
    s, args = check((256, 64), (64, 512), dtype, out_dtype, target=SM90A_4, instruction="wgmma(")
    ptx = ts.build(s, args, target=SM90A_4).get_source("ptx")
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32" in ptx
    # The operands are arguments: their tiles are fetched by TMA on mbarriers (step 3).
    assert "cp.async.bulk.tensor.2d" in ptx and "cp.async.cg" not in ptx


def test_sm_90a_default_is_persistent_with_more_tiles_than_sms():
    """264 tiles of 128 x 256 over 132 blocks: each block computes 2 in turn, its TMA pipeline
    (the tiles and mbarriers set up once) running across them (tutorial 08's step 4, checked in
    the interpreter by test_tma.py)."""
    a, b, y = product((3072, 192), (192, 2816), "float16")
    s = op.default_schedule(y, ts.Target("cuda -arch=sm_90a"))
    text = str(ts.lower(s, [a, b, y]))
    assert 'thread_binding(0, 132, "blockIdx.x")' in text
    tile_loop = text.index("in range(0, 2)")
    # One stage per k tile (k has 3; shared memory would hold 4 of 128 x 256).
    assert text.index("mbarrier_init") < tile_loop and text.count("mbarrier_init") == 3
    ptx = ts.build(s, [a, b, y], target="cuda -arch=sm_90a").get_source("ptx")
    assert "cp.async.bulk.tensor.2d" in ptx and "wgmma.mma_async" in ptx


def test_sm_90a_default_runs_b_read_n_by_k_on_wgmma():
    """matmul with transpose_b (dense's weight layout): B's tiles k-major like A's (the _bt
    intrinsics), fetched by TMA as one box of 256 rows."""
    ptx = check_transposed_b((256, 64), (512, 64), target=SM90A_4, instruction="wgmma(")
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32" in ptx
    assert "cp.async.bulk.tensor.2d" in ptx


def test_sm_90a_default_keeps_mma_sync_where_wgmma_would_leave_sms_idle():
    # 64 tiles of 128 x 64; rows of 1001 halves (not 16-byte aligned) that TMA cannot fetch at
    # a shape the tiles do not divide.
    for shape_a, shape_b, transpose_b in [((512, 256), (256, 1024), False),
                                          ((512, 256), (1024, 256), True),
                                          ((1000, 1000), (1000, 1001), False)]:
        a, b, y = product(shape_a, shape_b, "float16", transpose_b=transpose_b)
        text = str(ts.lower(op.default_schedule(y, ts.Target("cuda -arch=sm_90a")), [a, b, y]))
        assert "mma_sync" in text and "wgmma(" not in text


def test_sm_90a_default_runs_wgmma_at_a_shape_its_tiles_do_not_divide():
    """250 x 251 x 72 (B read n x k) on 8 SMs: 8 tiles of 128 x 64 whose last row and column of
    tiles run past the output, and a k tile past k (1000 x 1001's 128 tiles on 132 SMs, the
    same way). TMA reads zeros past the operands' edges (the k tile's padding adds nothing),
    and the fragment stores of the edge tiles stop at the output's rows and columns
    (fragment_store's limits), checked element by element in the interpreter."""
    target = "cuda -arch=sm_90a -num-cores=8"
    ptx = check_transposed_b((250, 72), (251, 72), target=target, instruction="wgmma(")
    assert "wgmma.mma_async.sync.aligned.m64n64k16.f32" in ptx
    assert "cp.async.bulk.tensor.2d" in ptx


@pytest.mark.parametrize("m,n,k,blocks,width", [(64, 256, 2048, 8, "m64n64k16"),
                                                 (40, 200, 2000, 8, "m64n128k16"),
                                                 (100, 128, 2048, 8, "m64n64k16")], ids=str)
def test_sm_90a_default_splits_k_on_wgmma_for_a_few_rows(m, n, k, blocks, width, monkeypatch):
    """A few rows over a long k (64 x 4096 x 4096 on 132 SMs: 16 tiles) on 8 SMs, where
    mma.sync would split k too: tiles of one block row (one warp group for 64 rows, two for 100),
    k split into parts whose tiles fill the SMs (rfactor: the partial sums [part, i, j] are the
    wgmma product, a persistent kernel over the parts' tiles), the last block to finish a tile
    summing its parts in the same kernel (reverse_compute_at; TESSEL_CUDA_SPLIT_K_KERNELS=2: a
    second kernel sums them).
    Parts of 1024 where some width fills the SMs enough (2 x 4 tiles of 64 columns), else of 512:
    at k = 2000, 2 x 4 tiles of 128 x 64 columns, the last of the four parts running past k,
    where TMA reads zeros; the 40 and 100 rows' tile stores stop at the output's edge (and 200
    columns' at the second tile's)."""
    target = "cuda -arch=sm_90a -num-cores=8"
    s, args = check((m, k), (k, n), target=target, instruction="wgmma(")
    text = str(ts.lower(s, args))
    assert ".rf" in text and f'thread_binding(0, {blocks}, "blockIdx.x")' in text
    assert "tile_arrive(" in text
    mod = ts.build(s, args, target=target)
    assert mod.get_source("cu").count("__global__") == 1
    ptx = mod.get_source("ptx")
    assert f"wgmma.mma_async.sync.aligned.{width}.f32" in ptx and "cp.async.bulk.tensor.2d" in ptx
    assert "atom.global.add" in ptx or "red.global.add" in ptx
    # The switch: a second kernel sums the parts (its form, not run here: the interpreter checks
    # the default's above).
    monkeypatch.setenv("TESSEL_CUDA_SPLIT_K_KERNELS", "2")
    a, b, y = product((m, k), (k, n), "float16")
    s2 = op.default_schedule(y, ts.Target(target))
    assert "tile_arrive(" not in str(ts.lower(s2, [a, b, y]))
    assert ts.build(s2, [a, b, y], target=target).get_source("cu").count("__global__") == 2
    monkeypatch.delenv("TESSEL_CUDA_SPLIT_K_KERNELS")
    # 64 x 4096 x 4096 on the H100's 132 SMs: 32 tiles of 64 x 128, in 4 parts of 1024; a short
    # k (64 x 3072 x 768) fills them with mma.sync's small tiles, unsplit.
    a, b, y = product((64, 4096), (4096, 4096), "float16")
    text = str(ts.lower(op.default_schedule(y, ts.Target("cuda -arch=sm_90a")), [a, b, y]))
    assert 'thread_binding(0, 128, "blockIdx.x")' in text and "wgmma(" in text
    assert "// 32 * 1024" in text  # the part's first k: 32 column tiles, parts of 1024
    a, b, y = product((64, 768), (768, 3072), "float16")
    text = str(ts.lower(op.default_schedule(y, ts.Target("cuda -arch=sm_90a")), [a, b, y]))
    assert "mma_sync" in text and ".rf" not in text


def test_sm_90a_default_split_k_sum_is_the_output():
    """A float32 output: the sum over the parts is the output itself, computed after each tile of
    partial sums by the last block to finish it (its reduction over the parts inside)."""
    target = "cuda -arch=sm_90a -num-cores=8"
    s, args = check((64, 2048), (2048, 256), out_dtype="float32", target=target,
                    instruction="wgmma(")
    assert "tile_arrive(" in str(ts.lower(s, args))
    assert ts.build(s, args, target=target).get_source("cu").count("__global__") == 1


@pytest.mark.parametrize("m", [128, 96])
def test_sm_90a_default_runs_one_row_of_tiles_on_wgmma(m):
    """m <= 128 rows that mma.sync would compute unsplit (128 x 4096 x 4096 on 132 SMs: 64
    tiles of 128 x 64) run on the wgmma kernel, unsplit: 4 tiles of 64 columns for 8 SMs, the
    rows past m (96) zeros from TMA; checked in the interpreter. Too few tiles for the SMs
    (one tile of 64 columns) keep mma.sync."""
    target = "cuda -arch=sm_90a -num-cores=8"
    s, args = check((m, 512), (512, 256), target=target, instruction="wgmma(")
    ptx = ts.build(s, args, target=target).get_source("ptx")
    assert "wgmma.mma_async.sync.aligned.m64n64k16.f32" in ptx and ptx.count(".entry") == 1
    assert "cp.async.bulk.tensor.2d" in ptx
    a, b, y = product((m, 512), (512, 64), "float16")
    text = str(ts.lower(op.default_schedule(y, ts.Target(target)), [a, b, y]))
    assert "mma_sync" in text and "wgmma(" not in text


@pytest.mark.parametrize("dense", [False, True], ids=["matmul", "dense_bias_relu"])
def test_sm_90a_default_splits_k_on_wgmma_with_b_read_n_by_k(dense):
    """dense's weight layout (B read [n][k], the _bt intrinsics), bfloat16, 50 rows: the same
    split-K on wgmma, B's k-major tiles fetched by TMA from part * length on. dense's bias and
    activation are the summing kernel's: the parts' partial sums store their fragments as they
    are."""
    ptx = check_transposed_b((50, 2048), (256, 2048), "bfloat16", dense=dense,
                             target="cuda -arch=sm_90a -num-cores=8", instruction="wgmma(")
    assert "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16" in ptx
    assert "cp.async.bulk.tensor.2d" in ptx


def test_sm_90a_default_1000_cubed_compiles_with_edge_stores():
    a, b, y = product((1000, 1000), (1000, 1000), "float16")
    s = op.default_schedule(y, ts.Target("cuda -arch=sm_90a"))
    text = str(ts.lower(s, [a, b, y]))
    assert 'thread_binding(0, 128, "blockIdx.x")' in text and "wgmma(" in text
    # 128 x 64 tiles: 24 KB a k tile, 8 of the 16 in flight.
    assert text.count("mbarrier_init") == 8
    m = ts.build(s, [a, b, y], target="cuda -arch=sm_90a")
    cu = m.get_source("cu")
    # Whole tiles store without checks (paired 32-bit stores), the edge tiles element by element.
    assert "if (tsl_rows >= 16 && tsl_cols >= 8) {" in cu
    assert "cp.async.bulk.tensor.2d" in m.get_source("ptx")


@pytest.mark.parametrize("shape_a,shape_b,transpose_b", [
    ((3, 128, 256), (3, 256, 128), False),  # the batch's tiles fill 4 SMs
    ((2, 120, 128), (2, 256, 128), True),   # B read n x k; 120 rows: TMA's zeros, edge stores
    ((3, 64, 128), (1, 128, 128), False),   # one B for the batch (broadcast), one warp group
], ids=str)
def test_sm_90a_batch_matmul_runs_on_wgmma(shape_a, shape_b, transpose_b):
    """A batched product whose tiles, all the batch's, keep the SMs busy is tutorial 08's
    persistent kernel, the batch a leading tile loop: A's (and B's) tiles fetched by 3-D TMA
    boxes of one matrix, B in column panels after its batch dim."""
    target = "cuda -arch=sm_90a -num-cores=4"
    if transpose_b:
        ptx = check_transposed_b(shape_a, shape_b, target=target, instruction="wgmma(")
    else:
        s, args = check(shape_a, shape_b, target=target, instruction="wgmma(")
        ptx = ts.build(s, args, target=target).get_source("ptx")
    assert "wgmma.mma_async" in ptx and "cp.async.bulk.tensor.3d" in ptx
    # BERT's attention (12 x 128 x 128 x 64) leaves the 132 SMs idle: mma.sync serves it.
    a, b, y = product((12, 128, 64), (12, 64, 128), "float16")
    text = str(ts.lower(op.default_schedule(y, ts.Target("cuda -arch=sm_90a")), [a, b, y]))
    assert "mma_sync" in text and "wgmma(" not in text


def test_sm_90a_default_tiles_are_no_wider_than_n():
    """16000 x 200: 256-column tiles would have kept the 132 SMs busiest, but one would be clipped
    to 200 columns, narrower than its wgmma's n (lowering refused it): 128-column tiles serve."""
    a, b, y = product((16000, 512), (512, 200), "float16")
    text = str(ts.lower(op.default_schedule(y, ts.Target("cuda -arch=sm_90a")), [a, b, y]))
    assert "wgmma(" in text and "128, 1)" in text.split("wgmma(")[1].split("\n")[0]
