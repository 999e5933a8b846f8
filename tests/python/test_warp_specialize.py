# Warp specialization (docs/cuda.md, "Warp specialization"): tutorial 08's step 5, a tma()
# pipeline fed by a producer warp group of its own, in the SPMD interpreter against numpy (the
# producer refills a copy only after both consumer warp groups released it on an mbarrier; a
# refill the releases do not order is an error there), the CUDA it generates (no block barrier
# in the consumers' loop, registers moved by setmaxnreg under __launch_bounds__(384, 1)), NVRTC
# for sm_90a, and the schedule errors.

import pytest

import tessel as ts
from util import tutorial


t8 = tutorial("08_hopper_gemm")


def specialized(make):
    """make's schedule with its shared tiles warp-specialized."""
    def schedule(m, n, k, dtype="float16", bt=False):
        s, args = make(m, n, k, dtype, bt)
        for T in s.stages:
            if T.op.name.endswith(".shared"):
                T.warp_specialize()
        return s, args
    return schedule


def test_tutorial_step_5_matches_numpy_in_interpreter():
    title, make, shape = t8.STEPS[4]
    assert title.startswith("5.")
    t8.check_in_interpreter(make, shape)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape,group,blocks", [((256, 512, 384), 2, 2), ((384, 512, 448), 3, 3),
                                                ((256, 512, 128), 2, 1), ((256, 512, 64), 2, 2)])
def test_persistent_blocks_of_several_tiles(shape, group, blocks, dtype):
    """Blocks of 1 to 4 tiles; 1 to 7 k tiles through 4 copies (the producer runs on into the
    next tile whatever the count: 2 k tiles a tile reuse each copy every other tile)."""
    t8.check_in_interpreter(lambda m, n, k, dtype="float16", bt=False:
                            t8.step5(m, n, k, dtype, bt, group=group, blocks=blocks), shape, dtype)


@pytest.mark.parametrize("bt", [False, True])
def test_one_tile_a_block(bt):
    """Step 1's blocks (128 x 128, no tile loop), TMA copies from a producer warp group; B read
    n x k too."""
    make = specialized(lambda m, n, k, dtype, bt: t8.step1(m, n, k, dtype, bt=bt, tma=True))
    t8.check_in_interpreter(make, (256, 256, 6 * 64), bt=bt)


def lowered_cuda(make=t8.step5, shape=(1024, 1024, 1024)):
    s, args = make(*shape)
    return ts.build(s, args, target="cuda -arch=sm_90a")


def consumers_loop(cu):
    """The consumers' k loop: from their setmaxnreg to the wait after the loop."""
    start = cu.index("setmaxnreg.inc")
    return cu[start:cu.index("wgmma.wait_group.sync.aligned 0", start)]


def test_generated_cuda_has_no_block_barrier_among_the_consumers():
    f = lowered_cuda()
    cu = f.get_source("cu")
    assert "__launch_bounds__(384, 1)" in cu
    assert "setmaxnreg.dec.sync.aligned.u32 40;" in cu
    assert "setmaxnreg.inc.sync.aligned.u32 232;" in cu
    assert cu.count("__syncthreads()") == 1  # after the mbarriers' init, before the roles part
    loop = consumers_loop(cu)
    assert "__syncthreads()" not in loop
    assert "mbarrier.arrive.shared::cta.b64" in loop  # the release of the previous copy
    assert "wgmma.wait_group.sync.aligned 1" in loop  # ... after its group retired
    assert "cp.async.bulk.tensor" not in loop  # the producer's alone
    ptx = f.get_source("ptx")
    for instruction in ("setmaxnreg.inc.sync.aligned.u32", "mbarrier.arrive.shared::cta.b64",
                        "cp.async.bulk.tensor.2d", "wgmma.mma_async.sync.aligned"):
        assert instruction in ptx, instruction


def test_one_consumer_warp_group_keeps_its_registers():
    """64-row tiles (one consumer warp group, 256 threads): the even share is already 255."""
    make = specialized(lambda m, n, k, dtype="float16", bt=False:
                       t8.step1(m, n, k, dtype, bm=64, bn=128, tma=True))
    cu = lowered_cuda(make, (512, 512, 256)).get_source("cu")
    assert "setmaxnreg" not in cu
    assert "__launch_bounds__(256)" in cu
    t8.check_in_interpreter(make, (128, 256, 256))


def test_warp_specialize_needs_tma():
    s, args = t8.step1(256, 256, 256)  # cp.async copies
    AS = [T for T in s.stages if T.op.name == "A.shared"][0]
    with pytest.raises(ts.ScheduleError, match="not fetched by tma"):
        AS.warp_specialize()


def test_every_tile_of_the_pipeline_or_none():
    s, args = t8.step4(256, 512, 384, group=2, blocks=2)
    [T for T in s.stages if T.op.name == "A.shared"][0].warp_specialize()
    with pytest.raises(ts.ScheduleError, match="warp_specialize\\(\\) all or none"):
        ts.lower(s, args)


def test_warp_groups_must_be_128_threads():
    """Warps of a consumer group along threadIdx.y: 2 of them are 64 threads, not a group."""
    A, B, C = t8.gemm(128, 128, 256)
    s = ts.create_schedule(C)
    AS = s.cache_read(A, "shared", [C])
    i, j = C.op.axis
    (r,) = C.op.reduce_axis
    ko, ki = s[C].split(r, factor=64)
    bi, i = s[C].split(i, factor=64)
    ty, i = s[C].split(i, factor=32)
    s[C].bind(bi, "blockIdx.x")
    s[C].bind(ty, "threadIdx.y")
    s[C].bind(j, "threadIdx.x")
    s[AS].compute_at(s[C], ko)
    s[AS].tma()
    s[AS].pipeline(2)
    s[AS].warp_specialize()
    with pytest.raises(ts.ScheduleError, match="128 threads; the block has 128 x 2"):
        ts.lower(s, [A, B, C])


def test_warp_specialize_needs_sm_90a():
    s, args = t8.step5(256, 512, 384, group=2, blocks=2)
    with pytest.raises(ts.ScheduleError, match="lacks setmaxnreg"):
        ts.build(s, args, target="cuda -arch=sm_90")
