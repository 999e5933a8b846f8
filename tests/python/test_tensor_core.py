# Tensor cores (docs/cuda.md, "Tensor cores"): tutorial 07's tensor-core GEMM, step by step, in
# the SPMD interpreter (warps with PTX's fragment layouts, race detector on) against numpy, and
# compiled by NVRTC for sm_80 and sm_90 with mma.sync and ldmatrix in the PTX; tensorize's errors.

import numpy as np
import pytest

import tessel as ts
from util import tutorial


tc = tutorial("07_tensor_core_gemm")


@pytest.mark.parametrize("step", [1, 2, 3, 4])
def test_tutorial_step_matches_numpy_in_interpreter(step):
    _, make, shape = tc.STEPS[step - 1]
    tc.check_in_interpreter(make, shape)


@pytest.mark.parametrize("shape", [(256, 256, 32), (128, 512, 224)], ids=str)
def test_pipelined_gemm_at_trip_counts_below_and_above_the_depth(shape):
    tc.check_in_interpreter(tc.step4, shape=shape)  # k / 32 = 1 and 7 iterations, depth 4


@pytest.mark.parametrize("step", [5, 6])
def test_swizzled_pipelined_gemm_above_the_depth(step):
    """Regression: with more k tiles than the pipeline's buffers the loop's stage offset is a
    variable ((k.outer % 4) * tile), which the simplifier moves outside the swizzle; the tile
    operands of ldmatrix keep it outside too (a 7-iteration k loop, depth 4)."""
    make, bk = (tc.step5, 32) if step == 5 else (tc.step6, 64)
    tc.check_in_interpreter(make, shape=(128, 256, 7 * bk))


def swizzle_arguments(cu):
    """The first argument of every tsl_swizzle call in CUDA source."""
    args, start = [], 0
    while (i := cu.find("tsl_swizzle(", start)) >= 0:
        depth, j = 0, i + len("tsl_swizzle(")
        k = j
        while depth > 0 or cu[k] != ",":
            depth += {"(": 1, ")": -1}.get(cu[k], 0)
            k += 1
        args.append(cu[j:k])
        start = k
    return args


def test_pipelined_swizzle_leaves_the_stage_offset_outside():
    """Every swizzle in step 6's kernel is of a loop-invariant offset: the pipelined k loop's
    stage offset is added outside it (whole phase cycles), so the CUDA compiler can hoist the
    swizzles out of the loop."""
    s, args = tc.step6(1024, 1024, 1024)
    cu = ts.build(s, args, target="cuda -arch=sm_90").get_source("cu")
    swizzled = [a for a in swizzle_arguments(cu) if "(int)" in a]
    assert len(swizzled) > 16
    assert not [a for a in swizzled if "k_outer" in a]


@pytest.mark.parametrize("shape", [(256, 128, 96), (128, 256, 32)], ids=str)
def test_double_buffered_gemm_at_other_shapes(shape):
    tc.check_in_interpreter(tc.step3, shape=shape)


def test_double_buffered_k_tile_of_one_fragment():
    """Regression: with k tiles of one fragment (bk = 16) the barrier before the ldmatrix sits
    inside the fragments' allocation, and double_buffer (and pipeline) refused the loop as one
    "holding a barrier inside its computation" (a quarter of the tuner's tensor-core states)."""
    tc.check_in_interpreter(lambda m, n, k, dtype: tc.step2(m, n, k, dtype, bk=16,
                                                           double_buffer=True))


def test_tf32_gemm_matches_numpy_in_interpreter():
    tc.check_in_interpreter(tc.step2, dtype="float32")
    tc.check_in_interpreter(tc.step4, shape=(128, 256, 64), dtype="float32")  # pipelined, bk 16


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_nvrtc_compiles_mma_and_ldmatrix(arch):
    s, args = tc.step3(1024, 1024, 1024)
    ptx = ts.build(s, args, target="cuda -arch=" + arch).get_source("ptx")
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx


def test_pipelined_step_copies_16_bytes_with_cp_async():
    s, args = tc.step4(1024, 1024, 1024)
    f = ts.build(s, args, target="cuda -arch=sm_90")
    cu, ptx = f.get_source("cu"), f.get_source("ptx")
    assert "cp.async.cg.shared.global [%0], [%1], 16;" in cu  # whole tiles: no zero fill
    assert "cp.async.wait_group" in ptx and "mma.sync.aligned.m16n8k16" in ptx


def test_accumulators_are_stored_in_column_pairs():
    """Each lane's two adjacent columns of a C fragment row in one store: 8 bytes of float32
    (through __stwb: NVVM splits a float2 assignment there) or 4 bytes of two float16."""
    s, args = tc.step3(1024, 1024, 1024)
    ptx = ts.build(s, args, target="cuda -arch=sm_90").get_source("ptx")
    assert "st.global.wb.v2.f32" in ptx and "st.global.f32" not in ptx
    for n, paired in ((1024, True), (1001, False)):  # an odd row stride: single stores
        a = ts.placeholder((n, n), dtype="float16", name="a")
        b = ts.placeholder((n, n), dtype="float16", name="b")
        y = ts.op.matmul(a, b)
        s = ts.op.default_schedule(y, ts.Target("cuda -arch=sm_80"))
        ptx = ts.build(s, [a, b, y], target="cuda -arch=sm_80").get_source("ptx")
        assert ("st.global.u32" in ptx) == paired and ("st.global.u16" in ptx) != paired, n


@pytest.mark.parametrize("dtype,instruction", [
    ("bfloat16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
    ("float32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"),
])
def test_nvrtc_compiles_other_input_types(dtype, instruction):
    s, args = tc.step3(512, 512, 512, dtype)
    assert instruction in ts.build(s, args, target="cuda -arch=sm_80").get_source("ptx")


def test_tensorize_is_a_replayable_step():
    s, args = tc.step2(256, 256, 64)
    py = s.to_python()
    assert 's.tensorize(' in py and '"mma_m16n8k16_f16"' in py and '"ldmatrix_a"' in py
    again = ts.create_schedule(args[-1])
    ns = {}
    exec(py, ns)
    ns["apply_schedule"](again)
    assert str(ts.lower(again, args)) == str(ts.lower(s, args))


def test_tensor_intrinsics_are_listed():
    names = ts.tensor_intrins()
    for n in ("mma_m16n8k16_f16", "mma_m16n8k16_bf16", "mma_m16n8k8_tf32", "ldmatrix_a",
              "ldmatrix_b_trans", "ldmatrix_b", "ldmatrix_b_trans_x4", "ldmatrix_b_x4", "store_c"):
        assert n in names


def test_tensorize_mismatch_is_a_schedule_error():
    A, B, C = tc.gemm(64, 64, 64)
    s = ts.create_schedule(C)
    CF = s.cache_write(C, "warp")
    i, j = CF.op.axis
    with pytest.raises(ts.ScheduleError, match="replaces 3 loops .* loop 'i0' .* has extent 64"):
        s[CF].tensorize(i, "mma_m16n8k16_f16")
    with pytest.raises(ts.ScheduleError, match="unknown tensor intrinsic 'wmma'"):
        s[CF].tensorize(i, "wmma")


def test_tensorized_stage_needs_warps(monkeypatch):
    """A kernel whose threadIdx.x is not 32 (a warp) cannot run a tensorized stage."""
    def copy_over_64_lanes(s, T, warps, vector):
        t = s[T].fuse(*s[T].op.axis)
        t, v = s[T].split(t, factor=vector)
        t, x = s[T].split(t, factor=64)
        t, y = s[T].split(t, factor=warps[1])
        _, z = s[T].split(t, factor=warps[0])
        for loop, tag in ((x, "threadIdx.x"), (y, "threadIdx.y"), (z, "threadIdx.z")):
            s[T].bind(loop, tag)

    monkeypatch.setattr(tc, "copy_to_shared", copy_over_64_lanes)
    s, args = tc.step2(128, 128, 64)
    with pytest.raises(ts.ScheduleError, match="threadIdx.x extent must be 32, but it is 64"):
        ts.lower(s, args)
