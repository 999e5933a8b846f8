# Hopper's warp-group tensor cores (docs/cuda.md, "Warp-group tensor cores (wgmma)"): tutorial 08's
# GEMM in the SPMD interpreter (warp groups, the asynchronous proxy's rules) against numpy, compiled
# by NVRTC for sm_90a with wgmma in the PTX, and the errors of layouts and warp arrangements the
# instruction cannot take.

import ml_dtypes
import numpy as np
import pytest

import tessel as ts
from util import tutorial


t8 = tutorial("08_hopper_gemm")


@pytest.mark.parametrize("step", [1, 2])
def test_tutorial_step_matches_numpy_in_interpreter(step):
    _, make, shape = t8.STEPS[step - 1]
    t8.check_in_interpreter(make, shape)


def test_several_blocks_and_more_k_tiles_than_stages():
    """Two blocks each way and 7 k tiles through a 4-deep pipeline (the stage offset varies)."""
    t8.check_in_interpreter(t8.step1, (256, 256, 7 * 64))


@pytest.mark.parametrize("tiles", [1, 4])
def test_k_tiles_up_to_the_pipeline_depth(tiles):
    """Regression: with as many k tiles as stages the first iteration is peeled off the loop and
    its B operand's origin is a constant; its swizzle call stays (a tile operand names its
    buffer's swizzle by it) instead of folding to a number."""
    t8.check_in_interpreter(t8.step1, (128, 128, tiles * 64))


def test_b_read_n_by_k_is_k_major():
    t8.check_in_interpreter(t8.step1, (128, 128, 128), bt=True)


@pytest.mark.parametrize("bt", [False, True])
def test_bfloat16_matches_numpy_in_interpreter(bt):
    m, n, k = 128, 128, 128
    s, args = t8.step1(m, n, k, "bfloat16", bt=bt)
    rng = np.random.default_rng(4)
    a = rng.standard_normal((m, k)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((n, k) if bt else (k, n)).astype(ml_dtypes.bfloat16)
    c = np.full((m, n), np.nan, dtype="float32")
    ts.lower(s, args).run(a, b, c)
    ref = a.astype("float64") @ (b.T if bt else b).astype("float64")
    np.testing.assert_allclose(c, ref, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("make", ["step1", "step2"])
def test_nvrtc_compiles_wgmma_for_sm_90a(make):
    s, args = getattr(t8, make)(1024, 1024, 1024)
    f = ts.build(s, args, target="cuda -arch=sm_90a")
    ptx = f.get_source("ptx")
    for instruction in ("wgmma.mma_async.sync.aligned", "wgmma.fence.sync.aligned",
                        "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned",
                        "fence.proxy.async.shared::cta", "cp.async.cg.shared.global"):
        assert instruction in ptx, instruction
    log = f.get_source("nvrtc_log")
    assert "0 bytes spill stores" in log and "wgmma" not in log.lower(), log  # no serialization


def test_wgmma_needs_sm_90a():
    s, args = t8.step1(256, 256, 256)
    with pytest.raises(ts.CompileError, match="only sm_90a has"):
        ts.build(s, args, target="cuda -arch=sm_90")


def test_b_without_panels_is_a_layout_error():
    """Step 1's schedule without B's column panels: B's rows of 128 halves (256 bytes) are wider
    than any swizzle the descriptors know."""
    with pytest.raises(ts.ScheduleError, match="not laid out as wgmma reads shared memory"):
        make_without_panels()


def small_gemm(panels=True, groups="threadIdx.z", warps="threadIdx.y"):
    """Tutorial 08's step 1 at 128^3 without pipelining, with B's column panels or not and the
    warp groups and warps bound as given."""
    A, B, C = t8.gemm(128, 128, 128)
    s = ts.create_schedule(C)
    AS = s.cache_read(A, "shared", [C])
    BS = s.cache_read(B, "shared", [C])
    CF = s.cache_write(C, "warp")
    i, j = C.op.axis
    g, i = s[C].split(i, factor=64)
    w, i = s[C].split(i, factor=16)
    fj, j = s[C].split(j, factor=8)
    s[C].reorder(g, w, fj, i, j)
    s[C].bind(g, groups)
    s[C].bind(w, warps)
    s[C].unroll(fj)
    s[C].tensorize(i, "store_c")
    s[CF].compute_at(s[C], w)
    ci, cj = CF.op.axis
    (ck,) = CF.op.reduce_axis
    ko, ck = s[CF].split(ck, factor=64)
    ki, ck = s[CF].split(ck, factor=16)
    s[CF].reorder(ko, ki, ci, cj, ck)
    s[CF].tensorize(ci, "wgmma_m64n128k16_f16")
    if panels:
        s[BS].storage_split(1, 64)
        s[BS].storage_reorder([1, 0, 2])
    for T in (AS, BS):
        s[T].compute_at(s[CF], ko)
        s[T].storage_swizzle()
        a, b = s[T].op.axis
        b, v = s[T].split(b, factor=8)
        t = s[T].fuse(a, b)
        t, x = s[T].split(t, factor=32)
        t, y = s[T].split(t, factor=4 if warps == "threadIdx.y" else 2)
        o, z = s[T].split(t, factor=2 if warps == "threadIdx.y" else 4)
        s[T].bind(x, "threadIdx.x")
        s[T].bind(y, "threadIdx.y")
        s[T].bind(z, "threadIdx.z")
        s[T].vectorize(v)
    return s, [A, B, C]


def make_without_panels():
    s, args = small_gemm(panels=False)
    return ts.lower(s, args)


def test_warps_of_a_group_must_be_thread_y():
    """Warp groups along threadIdx.y and warps along threadIdx.z: threadIdx.y is 2, no group of 4
    warps holds one 64-row tile. The build says so; the interpreter catches what the GPU would
    compute wrong."""
    # groups along y, warps along z: not a warp group's layout
    s2, args2 = small_gemm(groups="threadIdx.y", warps="threadIdx.z")
    with pytest.raises(ts.CompileError, match="warp group is 4 warps of threadIdx.y"):
        ts.build(s2, args2, target="cuda -arch=sm_90a")
    a = np.ones((128, 128), "float16")
    c = np.zeros((128, 128), "float32")
    with pytest.raises(ts.TesselRuntimeError, match="wgmma"):
        ts.lower(s2, args2).run(a, a, c)


def test_wgmma_intrinsics_are_listed():
    names = ts.tensor_intrins()
    for n in (8, 64, 128, 256):
        for suffix in ("f16", "bf16", "f16_bt", "bf16_bt"):
            assert f"wgmma_m64n{n}k16_{suffix}" in names
