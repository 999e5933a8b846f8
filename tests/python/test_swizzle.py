# storage_swizzle (docs/schedule.md, "storage_swizzle"): tutorial 07's step 5 (step 4's 128 x 256
# tiles pipelined by cp.async, swizzled instead of padded) and step 6 (k tiles of 64) in the SPMD
# interpreter against numpy, their PTX for sm_80/sm_90 (ldmatrix, 16-byte cp.async; step 6's
# shared memory refused for sm_80), a swizzled fp32 GEMM, the step as data, its errors.
import json

import numpy as np
import pytest

import tessel as ts
from util import replays, tutorial


tc = tutorial("07_tensor_core_gemm")


STEP5_CHECK = (128, 256, 128)  # one block, 4 k tiles


def test_step5_matches_numpy_in_interpreter():
    tc.check_in_interpreter(tc.step5, shape=STEP5_CHECK)


@pytest.mark.parametrize("shape", [(128, 256, 160), (128, 512, 32)], ids=str)
def test_step5_at_other_shapes(shape):
    tc.check_in_interpreter(tc.step5, shape=shape)  # k tiles: 5 over 4 copies, and 1


def test_step6_k_tiles_of_64_match_numpy_in_interpreter():
    tc.check_in_interpreter(tc.step6, shape=(128, 256, 192))  # 3 k tiles of 64: below the depth


def test_step6_fits_sm90_shared_memory_and_not_sm80s():
    s, args = tc.step6(1024, 1024, 1024)
    ptx = ts.build(s, args, target="cuda -arch=sm_90").get_source("ptx")
    assert "mma.sync.aligned.m16n8k16" in ptx and "cp.async.cg.shared.global" in ptx
    # 4 copies of 128 x 64 and 64 x 256 halves: 196,608 bytes, above sm_80's 166,912 (a typed
    # error naming both, before NVRTC runs).
    with pytest.raises(ts.ScheduleError, match="196608 bytes of shared memory.*166912"):
        ts.build(s, args, target="cuda -arch=sm_80")


def test_swizzled_tf32_gemm_matches_numpy_in_interpreter():
    tc.check_in_interpreter(tc.step5, shape=(128, 256, 64), dtype="float32")


def test_swizzled_double_buffered_gemm_matches_numpy_in_interpreter():
    tc.check_in_interpreter(
        lambda m, n, k, dtype: tc.step2(m, n, k, dtype, swizzle=True, double_buffer=True))


def test_step5_lowers_to_swizzled_16_byte_copies():
    s, args = tc.step5(*STEP5_CHECK)
    ir = str(ts.lower(s, args))
    assert "swizzle(" in ir
    assert "cp_async(" in ir and ", 16, " in ir  # 16-byte copies into the swizzled tiles
    assert "ldmatrix(" in ir


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_nvrtc_ptx_has_ldmatrix_and_16_byte_cp_async(arch):
    s, args = tc.step5(1024, 1024, 1024)
    module = ts.build(s, args, target="cuda -arch=" + arch)
    ptx = module.get_source("ptx")
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx
    assert "cp.async.cg.shared.global" in ptx and ", 16" in ptx
    assert "tsl_swizzle" in module.get_source("cu")


def fp32_gemm(n, depth=0):
    """A shared-memory fp32 GEMM: 32 x 32 tiles of C per block of 8 x 32 threads (4 rows each),
    32 x 32 tiles of A and B (rows of 128 bytes) copied with 4-float vectors, swizzled."""
    A = ts.placeholder((n, n), name="A")
    B = ts.placeholder((n, n), name="B")
    r = ts.reduce_axis((0, n), name="k")
    C = ts.compute((n, n), lambda i, j: ts.sum(A[i, r] * B[r, j], axis=r), name="C")
    s = ts.create_schedule(C)
    AS = s.cache_read(A, "shared", [C])
    BS = s.cache_read(B, "shared", [C])
    i, j = C.op.axis
    bi, i = s[C].split(i, factor=32)
    ty, i = s[C].split(i, factor=4)
    bj, tx = s[C].split(j, factor=32)
    ko, ki = s[C].split(C.op.reduce_axis[0], factor=32)
    s[C].reorder(bi, bj, ty, tx, ko, ki, i)
    s[C].bind(bi, "blockIdx.y")
    s[C].bind(bj, "blockIdx.x")
    s[C].bind(ty, "threadIdx.y")
    s[C].bind(tx, "threadIdx.x")
    for T in (AS, BS):
        s[T].compute_at(s[C], ko)
        a, b = s[T].op.axis
        b, v = s[T].split(b, factor=4)
        t = s[T].fuse(a, b)
        y, x = s[T].split(t, factor=32)
        s[T].bind(y, "threadIdx.y")
        s[T].bind(x, "threadIdx.x")
        s[T].vectorize(v)
        s[T].storage_swizzle()
        if depth:
            s[T].pipeline(depth)
    return s, [A, B, C]


@pytest.mark.parametrize("depth", [0, 3])
def test_swizzled_fp32_gemm_matches_numpy(depth):
    n = 64
    s, args = fp32_gemm(n, depth=depth)
    if depth:
        assert ", 16, 16)" in str(ts.lower(s, args))  # 16-byte cp.async into swizzled tiles
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n)).astype("float32") for _ in range(2))
    c = np.zeros((n, n), dtype="float32")
    ts.lower(s, args).run(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_storage_swizzle_is_a_replayable_step():
    s, args = tc.step5(256, 256, 64)
    assert ".storage_swizzle(" in s.to_python()
    steps = json.loads(s.to_json())
    steps = steps["steps"] if isinstance(steps, dict) else steps
    swz = [st for st in steps if st["kind"] == "storage_swizzle"]
    assert [sorted(st) for st in swz] == [["bits", "kind", "stage"]] * 2
    assert [st["bits"] for st in swz] == [3, 3]
    again = ts.schedule_from_json(s.outputs, s.to_json())
    assert str(ts.lower(again, args)) == str(ts.lower(s, args))
    replays(s, args)


def shared_stage(s, name):
    return [st for st in s.stages if st.op.name == name][0]


def test_storage_swizzle_docstring_comes_from_the_step():
    s, _ = tc.step5(256, 256, 64)
    doc = type(s[shared_stage(s, "A.shared")]).storage_swizzle.__doc__
    assert "bits" in doc and "chunk" in doc and "ldmatrix" in doc


def test_swizzle_errors_name_the_stage():
    s, _ = tc.step2(256, 256, 64)  # storage_align on both shared tiles
    with pytest.raises(ts.ScheduleError, match="storage_swizzle.*'A.shared'.*padded"):
        s[shared_stage(s, "A.shared")].storage_swizzle()
    s, _ = tc.step5(256, 256, 64)
    AS = s[shared_stage(s, "A.shared")]
    with pytest.raises(ts.ScheduleError, match="already swizzled"):
        AS.storage_swizzle(bits=2)
    with pytest.raises(ts.ScheduleError, match="storage_align.*swizzled"):
        AS.storage_align(0, 32, 8)
    s, _ = tc.step1(256, 256, 64)
    with pytest.raises(ts.ScheduleError, match="bits 5 must be 1, 2 or 3"):
        s[shared_stage(s, "B.shared")].storage_swizzle(bits=5)


def test_swizzle_of_a_cpu_stage_is_refused_at_lowering():
    A = ts.placeholder((16, 32), name="A")
    B = ts.compute((16, 32), lambda i, j: A[i, j] + 1.0, name="B")
    C = ts.compute((16, 32), lambda i, j: B[i, j] * 2.0, name="C")
    s = ts.create_schedule(C)
    s[B].storage_swizzle()
    with pytest.raises(ts.ScheduleError, match="stage 'B' has global storage"):
        ts.lower(s, [A, C])
