# pipeline(depth): shared tiles copied with cp.async over `depth` buffers (docs/cuda.md,
# "Pipelined copies (cp.async)"). The GEMM tutorial's step 7 at odd shapes and trip counts
# below the depth, against numpy in the SPMD interpreter (which checks that no thread reads a
# tile before its copy landed); the lowered loop's structure; NVRTC accepts the kernels for
# sm_90 and their PTX holds cp.async; the primitive's errors.
import json

import numpy as np
import pytest

import tessel as ts
from util import replays, tutorial


gemm = tutorial("05_gpu_gemm")
SM90 = "cuda -arch=sm_90"
SMALL = dict(block=64, threads=16, bk=16)  # choose_tiles' tiles for small products


def run_in_interpreter(s, args, m, n, k, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype("float32")
    b = rng.standard_normal((k, n)).astype("float32")
    c = np.full((m, n), np.nan, dtype="float32")
    ts.lower(s, args).run(a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("depth", [3, 4])
@pytest.mark.parametrize("shape", [(130, 100, 45), (300, 260, 77)],
                         ids=lambda s: "x".join(map(str, s)))
def test_pipelined_gemm_at_odd_shapes_matches_numpy(shape, depth):
    m, n, k = shape
    s, args = gemm.step4(n, m=m, k=k, pipeline=depth, **SMALL)
    run_in_interpreter(s, args, m, n, k, seed=m + depth)


@pytest.mark.parametrize("depth", [2, 3, 4])
@pytest.mark.parametrize("k", [5, 20, 40])  # k.outer runs 1, 3 and 5 times (bk = 8)
def test_pipelined_gemm_any_trip_count(k, depth):
    s, args = gemm.step4(24, m=20, k=k, block=16, threads=4, bk=8, pipeline=depth)
    run_in_interpreter(s, args, 20, 24, k, seed=k)


def test_pipelined_gemm_with_strided_parts_matches_numpy():
    # Step 6's large tiles: 128 x 128 as 2 x 2 strided parts, 8 columns of k per step.
    s, args = gemm.step4(160, m=136, k=50, block=128, threads=16, bk=8, vthreads=2, pipeline=3)
    run_in_interpreter(s, args, 136, 160, 50, seed=7)


def test_tutorial_step7_is_step6_with_pipeline3():
    s6, _ = gemm.step6(1000)
    s7, _ = gemm.step7(1000)
    assert s7.to_python().replace(".pipeline(", "").count("\n") > 0
    assert ".double_buffer(" in s6.to_python() and ".double_buffer(" not in s7.to_python()
    assert s7.to_python().count(".pipeline(") == 2


def test_pipeline_loop_has_one_barrier_and_waits_for_its_own_tile():
    s, args = gemm.step4(64, block=32, threads=4, bk=8, pipeline=3)
    text = str(ts.lower(s, args, target=SM90, stop_after="inject_double_buffer"))
    # Three copies of each tile, allocated once outside the k loop; no register staging.
    assert "allocate A.shared: float32[3, " in text and "allocate B.shared: float32[3, " in text
    assert "A.shared.stage" not in text
    # Prologue: fetches 0 and 1, a commit each; the loop: wait(1), one barrier, compute, the
    # fetch two iterations ahead (guarded), commit.
    assert text.count("cp_async_commit()") == 3
    assert text.count("cp_async_wait(1)") == 1
    assert text.count("thread_barrier()") == 1
    assert "for k.outer in range(0, 8):" in text
    assert "if k.outer + 2 < 8:" in text


def test_fetches_become_16_byte_copies_with_zero_fill():
    s, args = gemm.step4(100, m=130, k=45, pipeline=3, **SMALL)
    text = str(ts.lower(s, args, target=SM90))
    # B's rows (100 floats) are 16-byte aligned: 16-byte copies. A's tile is stored transposed
    # (a scatter): 4-byte copies. Edge blocks read nothing past the matrix: src_bytes 0.
    assert "cp_async(B.shared, " in text and ", 16, " in text
    assert "cp_async(A.shared, " in text and ", 4, " in text
    assert "select(" in text


def test_nvrtc_compiles_the_pipelined_kernels_for_sm90():
    for make in (lambda: gemm.step7(1000), lambda: gemm.step4(100, m=130, k=45, pipeline=4,
                                                              **SMALL)):
        s, args = make()
        module = ts.build(s, args, target=SM90)
        cu, ptx = module.get_source("cu"), module.get_source("ptx")
        assert "cp.async.cg.shared.global" in cu and "cp.async.wait_group" in cu
        assert "cp.async.cg.shared.global" in ptx or "cp.async.ca.shared.global" in ptx
        assert "cp.async.commit_group" in ptx and "cp.async.wait_group" in ptx


def test_pipeline_below_sm80_names_the_target_and_suggests_double_buffer():
    s, args = gemm.step4(64, block=32, threads=4, bk=8, pipeline=3)
    with pytest.raises(ts.ScheduleError, match=r"pipeline.*sm_75.*cp\.async.*double_buffer"):
        ts.lower(s, args, target="cuda -arch=sm_75")


def test_pipeline_errors_name_the_stage():
    A = ts.placeholder((64, 64), name="A")
    B = ts.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
    s = ts.create_schedule(B)
    with pytest.raises(ts.ScheduleError, match="pipeline.*output"):
        s[B].pipeline(3)
    s, args = gemm.step4(64, block=32, threads=4, bk=8)
    shared = {st.op.name: st for st in s.stages if st.op.name.endswith(".shared")}
    AS, BS = shared["A.shared"], shared["B.shared"]
    with pytest.raises(ts.ScheduleError, match="pipeline.*'A.shared'.*depth 1 is less than 2"):
        s[AS].pipeline(1)
    s[AS].pipeline(3)
    with pytest.raises(ts.ScheduleError, match="already pipelined"):
        s[AS].pipeline(2)
    with pytest.raises(ts.ScheduleError, match="double_buffer.*already pipelined"):
        s[AS].double_buffer()
    # B.shared, computed at the same loop, is not pipelined: the loop cannot be.
    with pytest.raises(ts.ScheduleError, match="pipeline.*every shared stage"):
        ts.lower(s, args, target=SM90)
    s[BS].pipeline(4)  # ... nor pipelined at another depth
    with pytest.raises(ts.ScheduleError, match="pipeline.*buffered differently"):
        ts.lower(s, args, target=SM90)
    s2, _ = gemm.step4(64, block=32, threads=4, bk=8, double_buffer=True)
    AS2 = [st for st in s2.stages if st.op.name == "A.shared"][0]
    with pytest.raises(ts.ScheduleError, match="pipeline.*already double-buffered"):
        s2[AS2].pipeline(3)


@pytest.mark.parametrize("primitive,name", [(lambda st: st.pipeline(3), "pipeline"),
                                            (lambda st: st.double_buffer(), "double_buffer")])
def test_buffering_a_stage_outside_a_kernel_is_an_error(primitive, name):
    A = ts.placeholder((64, 64), name="A")
    k = ts.reduce_axis((0, 64), name="k")
    C = ts.compute((64, 64), lambda i, j: ts.sum(A[i, k] * A[k, j], axis=k), name="C")
    s = ts.create_schedule(C)
    AS = s.cache_read(A, "shared", [C])
    ko, _ = s[C].split(C.op.reduce_axis[0], factor=8)
    s[AS].compute_at(s[C], ko)
    primitive(s[AS])
    with pytest.raises(ts.ScheduleError, match=f"{name}: stage 'A.shared' is not a shared "
                                               "stage computed inside a GPU kernel"):
        ts.lower(s, [A, C])


def test_shared_memory_check_counts_every_copy():
    # 128 x 128 tiles with bk = 64: A's tile (64 x 132 floats) and B's (64 x 128) take 66 KB;
    # eight copies of each (528 KB) exceed the H100's 227 KB a block.
    s, args = gemm.step4(256, block=128, threads=16, bk=64, pipeline=8)
    with pytest.raises(ts.ScheduleError, match=r"shared memory.*in 8 copies"):
        ts.lower(s, args, target=SM90)


def test_shared_memory_check_counts_the_padding():
    # A's transposed tile is padded to rows of 132 floats (storage_align), B's rows are 128: at
    # bk = 224 the tiles take 224 x 260 x 4 = 232960 bytes, over the H100's 232448, though
    # unpadded (229376) they would fit. The kernel would fail at launch; lower() refuses it.
    s, args = gemm.step4(256, k=448, block=128, threads=16, bk=224)
    with pytest.raises(ts.ScheduleError, match=r"232960 bytes of shared memory"):
        ts.lower(s, args, target=SM90)
    s, args = gemm.step4(256, k=432, block=128, threads=16, bk=216)  # 224640 bytes: fits
    ts.lower(s, args, target=SM90)


def test_pipeline_step_round_trips_through_json_and_python():
    s, args = gemm.step4(64, block=32, threads=4, bk=8, pipeline=3)
    steps = json.loads(s.to_json())
    steps = steps["steps"] if isinstance(steps, dict) else steps
    piped = [st for st in steps if st["kind"] == "pipeline"]
    assert [sorted(st) for st in piped] == [["depth", "kind", "stage"]] * 2
    assert [st["depth"] for st in piped] == [3, 3]
    again = ts.schedule_from_json(s.outputs, s.to_json())
    assert str(ts.lower(again, args, target=SM90)) == str(ts.lower(s, args, target=SM90))
    replays(s, args)
    assert ".pipeline(" in s.to_python()
