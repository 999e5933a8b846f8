# Hopper's TMA copies on mbarriers (docs/cuda.md, "TMA"): tutorial 08's step 3 in the SPMD
# interpreter (the asynchronous copies land on their mbarrier phase; a read before the wait, a
# refill of a tile in use or a wait that cannot complete is an error there) against numpy,
# compiled by NVRTC for sm_90a with the bulk tensor copies and mbarrier waits in the PTX, and the
# schedule errors of stages TMA cannot fetch. TMA stores (docs/cuda.md, "TMA stores"): tutorial
# 08's step 7 at edges the tiles do not divide, its PTX, and the stages TMA cannot store.

import numpy as np
import pytest

import tessel as ts
from util import tutorial


t8 = tutorial("08_hopper_gemm")
SM90A = "cuda -arch=sm_90a"


def test_tutorial_step_3_matches_numpy_in_interpreter():
    _, make, shape = t8.STEPS[2]
    t8.check_in_interpreter(make, shape)


def test_several_blocks_each_refilling_its_copies():
    """2 x 2 blocks of 128 x 256, 7 k tiles through 4 copies: each mbarrier's second phase."""
    t8.check_in_interpreter(lambda m, n, k, dtype="float16", bt=False:
                            t8.step3(m, n, k, dtype, group=2), (256, 512, 7 * 64))


@pytest.mark.parametrize("k", [64, 128])
def test_k_tiles_up_to_the_pipeline_depth(k):
    """One k tile (the loop simplified away: one copy on one mbarrier phase) and two."""
    t8.check_in_interpreter(t8.step3, (128, 256, k))


def test_b_read_n_by_k():
    t8.check_in_interpreter(lambda m, n, k, dtype="float16", bt=False:
                            t8.step1(m, n, k, dtype, bt=bt, tma=True), (128, 128, 192), bt=True)


def test_nvrtc_compiles_bulk_tensor_copies_for_sm_90a():
    s, args = t8.step3(1024, 1024, 1024)
    f = ts.build(s, args, target="cuda -arch=sm_90a")
    ptx = f.get_source("ptx")
    for instruction in ("cp.async.bulk.tensor.2d.shared::cluster.global",
                        "mbarrier.try_wait.parity.shared::cta.b64",
                        "mbarrier.arrive.expect_tx.shared::cta.b64", "mbarrier.init.shared::cta.b64",
                        "wgmma.mma_async.sync.aligned"):
        assert instruction in ptx, instruction
    assert "cp.async.cg" not in ptx  # no thread copies left
    cu = f.get_source("cu")
    assert cu.count("const __grid_constant__ tsl_tensor_map") == 2  # A's map and B's


def k_loop(cu):
    """The CUDA source of a wgmma GEMM's k loop (up to the wait_group 0 after it)."""
    start = cu.index("for (int k_outer")
    return cu[start:cu.index("wgmma.wait_group.sync.aligned 0", start)]


def test_tma_k_loop_runs_without_proxy_fences():
    """TMA writes the tiles through the asynchronous proxy that wgmma reads them through: the
    barrier before a refill needs no fence.proxy.async (a MEMBAR.ALL.CTA on sm_90); one before the
    loop covers what the threads wrote earlier. cp.async tiles keep a fence per k tile."""
    fence = "fence.proxy.async.shared::cta;\\n\" ::: "
    for make, fenced in ((t8.step3, False), (t8.step4, False), (t8.step1, True)):
        cu = ts.build(*make(1024, 1024, 1024), target="cuda -arch=sm_90a").get_source("cu")
        assert (fence in k_loop(cu)) == fenced, make.__name__
        assert "__syncthreads();" in k_loop(cu)


def gemm_stage(split=False, pipeline=True, k=128, bk=32):
    """A CUDA-core GEMM whose A tiles (bk wide) are a tma() stage."""
    A, B, C = t8.gemm(128, 128, k)
    s = ts.create_schedule(C)
    AS = s.cache_read(A, "shared", [C])
    i, j = C.op.axis
    (r,) = C.op.reduce_axis
    ko, ki = s[C].split(r, factor=bk)
    s[C].bind(i, "blockIdx.x")
    s[C].bind(j, "threadIdx.x")
    s[AS].compute_at(s[C], ko)
    if split:
        s[AS].split(AS.op.axis[1], factor=8)
    s[AS].tma()
    if pipeline:
        s[AS].pipeline(2)
    return s, [A, B, C]


def test_tma_needs_a_pipeline():
    s, args = gemm_stage(pipeline=False)
    with pytest.raises(ts.ScheduleError, match="not pipelined"):
        ts.build(s, args, target="cuda -arch=sm_90a")


def test_tma_needs_hopper():
    s, args = gemm_stage()
    with pytest.raises(ts.ScheduleError, match="no Tensor Memory Accelerator"):
        ts.build(s, args, target="cuda -arch=sm_80")


def test_tma_stage_loops_stay_as_they_are():
    s, args = gemm_stage(split=True)
    with pytest.raises(ts.ScheduleError, match="split or fused"):
        ts.lower(s, args)


def test_tma_of_a_double_buffered_stage_is_refused():
    A, B, C = t8.gemm(128, 128, 128)
    s = ts.create_schedule(C)
    AS = s.cache_read(A, "shared", [C])
    s[AS].double_buffer()
    with pytest.raises(ts.ScheduleError, match="double-buffered"):
        s[AS].tma()


def test_rows_tma_cannot_read_are_a_schedule_error():
    """K = 100 halves: rows of 200 bytes, not a multiple of 16."""
    s, args = gemm_stage(k=100, bk=20)
    with pytest.raises(ts.ScheduleError, match="not a multiple of 16: TMA cannot copy it"):
        ts.lower(s, args)


@pytest.mark.parametrize("shape,group,blocks", [((256, 512, 384), 2, 2), ((256, 512, 384), 2, 1),
                                                ((384, 512, 448), 3, 3), ((256, 512, 192), 2, 2)])
def test_persistent_kernel_runs_its_pipeline_across_tiles(shape, group, blocks):
    """Step 4: blocks of several tiles (4 or 2 each; 3 k tiles is the fewest that run across)."""
    t8.check_in_interpreter(lambda m, n, k, dtype="float16", bt=False:
                            t8.step4(m, n, k, dtype, bt, group=group, blocks=blocks), shape)


def test_persistent_kernel_hoists_its_tiles_and_issues_the_next_tiles_copies():
    s, args = t8.step4(256, 512, 384, group=2, blocks=1)
    text = str(ts.lower(s, args, stop_after="inject_double_buffer"))
    tile_loop = text.index("in range(0, 4)")  # the block's 4 tiles
    assert text.index("allocate A.shared") < tile_loop  # hoisted out of the tile loop
    assert text.index("mbarrier_init") < tile_loop
    assert text.count("mbarrier_init") == 4  # once, not per tile
    # The next tile's copies, k tiles 0 .. 2 of tile + 1, issued in this tile's last iterations.
    assert "+ 1 < 0 + 4" in text  # ... while there is a next tile
    assert text.count("tma_load(A.shared") == 5  # 3 before the loop, this tile's, the next's


def test_too_few_k_tiles_keep_a_pipeline_per_tile():
    """2 k tiles through 4 copies: the next tile's copies would come from two tiles ahead."""
    s, args = t8.step4(256, 512, 128, group=2, blocks=1)
    text = str(ts.lower(s, args, stop_after="inject_double_buffer"))
    assert text.index("mbarrier_init") > text.index("in range(0, 4)")
    t8.check_in_interpreter(lambda m, n, k, dtype="float16", bt=False:
                            t8.step4(m, n, k, dtype, bt, group=2, blocks=1), (256, 512, 128))


@pytest.mark.parametrize("panels", [True, False], ids=["swizzled_panels", "dense_rows"])
@pytest.mark.parametrize("shape", [(200, 296, 192), (256, 256, 128)], ids=str)
def test_tma_store_step_matches_numpy_in_interpreter(shape, panels):
    """Step 7: the tiles past m and n are stored in part (TMA skips what lies outside C); a
    swizzled tile in 4 boxes of 128 x 32 floats, or a dense one in one box of 128 x 128."""
    t8.check_in_interpreter(lambda m, n, k, dtype="float16", bt=False:
                            t8.step7(m, n, k, dtype, bt, group=2, blocks=2, panels=panels), shape)


def test_tma_store_lowers_to_fenced_stores_of_one_thread():
    s, args = t8.step7(256, 256, 128, group=2, blocks=2)
    text = str(ts.lower(s, args, stop_after="inject_tma_stores"))
    copy = text[text.index("fence_proxy_async()"):]
    assert copy.index("thread_barrier()") < copy.index("tma_store(C.shared")
    assert copy.count("tma_store(C.shared") == 4  # a box a panel of 32 columns
    assert copy.index("tma_store_wait()") < copy.rindex("thread_barrier()")
    assert 'thread_binding(0, 1, "threadIdx.x")' in copy  # issued by one thread


def test_nvrtc_compiles_tma_stores_for_sm_90a():
    f = ts.build(*t8.step7(1024, 1024, 1024), target="cuda -arch=sm_90a")
    ptx = f.get_source("ptx")
    for instruction in ("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group",
                        "cp.async.bulk.commit_group", "cp.async.bulk.wait_group.read 0",
                        "fence.proxy.async.shared::cta"):
        assert instruction in ptx, instruction
    assert f.get_source("cu").count("const __grid_constant__ tsl_tensor_map") == 3  # A, B, C


def copy_through_shared(tma_store=True, scope="shared", bind=False, align=False):
    """C = 2 A in 32 x 64 tiles computed by 64 threads into a shared stage, copied out."""
    A = ts.placeholder((100, 64), name="A")
    C = ts.compute((100, 64), lambda i, j: A[i, j] * 2.0, name="C")
    s = ts.create_schedule(C)
    CS = s.cache_write(C, scope)
    i, j = C.op.axis
    bi, i = s[C].split(i, factor=32)
    s[C].bind(bi, "blockIdx.x")
    if bind:
        s[C].bind(j, "threadIdx.x")
    s[CS].compute_at(s[C], bi)
    if align:
        s[CS].storage_align(0, 8, 4)
    if scope == "shared":
        e = s[CS].fuse(*CS.op.axis)
        _, t = s[CS].split(e, factor=64)
        s[CS].bind(t, "threadIdx.x")
    if tma_store:
        s[C].tma_store()
    return s, [A, C]


def test_tma_store_copies_a_shared_stage_out_in_interpreter():
    s, args = copy_through_shared()
    a = np.random.default_rng(0).standard_normal((100, 64)).astype("float32")
    c = np.full((100, 64), np.nan, dtype="float32")
    ts.lower(s, args).run(a, c)
    np.testing.assert_array_equal(c, 2 * a)


def test_tma_store_of_a_shared_stage_is_refused():
    s, (A, C) = copy_through_shared(tma_store=False)
    CS = [st for st in s.stages if st.op.name == "C.shared"][0]
    with pytest.raises(ts.ScheduleError, match="shared memory; TMA stores into global tensors"):
        CS.tma_store()


def test_tma_store_needs_a_shared_stage_at_its_loops():
    s, args = copy_through_shared(scope="local")
    with pytest.raises(ts.ScheduleError, match="no shared stage is computed at one of its loops"):
        ts.lower(s, args)


def test_tma_store_copy_loops_stay_as_they_are():
    s, args = copy_through_shared(bind=True)
    with pytest.raises(ts.ScheduleError, match="not a serial loop"):
        ts.lower(s, args)


def test_tma_store_of_padded_rows_is_a_schedule_error():
    s, args = copy_through_shared(align=True)
    with pytest.raises(ts.ScheduleError, match="padded rows"):
        ts.lower(s, args)


def test_tma_store_needs_hopper():
    s, args = copy_through_shared()
    with pytest.raises(ts.ScheduleError, match="no Tensor Memory Accelerator"):
        ts.build(s, args, target="cuda -arch=sm_80")


def test_tma_store_round_trips_as_a_step():
    s, args = copy_through_shared()
    assert '"kind": "tma_store"' in s.to_json().replace('"kind":"', '"kind": "')
    again = ts.schedule_from_json(s.outputs, s.to_json())
    assert str(ts.lower(again, args, target=SM90A)) == str(ts.lower(s, args, target=SM90A))
    assert ".tma_store(" in s.to_python()
