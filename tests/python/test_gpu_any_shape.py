# GPU kernels at shapes their tiles do not divide (docs/cuda.md, "Shapes the tiles do not divide"):
# the GEMM tutorial's register-tile schedule at odd shapes, every tile configuration of its step 5,
# against numpy in the SPMD interpreter (race detector on) and compiled by NVRTC; the lowered
# kernel's register-tile loop has no guard, and the copies into shared memory of the blocks inside
# the matrix use 128-bit loads.

import numpy as np
import pytest

import tessel as ts
from util import tutorial


gemm = tutorial("05_gpu_gemm")

# (m, n, k): partial tiles in every dimension; a k that is not a multiple of 4 (A's rows are not
# 128-bit aligned); a matrix smaller than one tile.
SHAPES = [(67, 45, 37), (130, 132, 20), (9, 5, 3)]


def run_in_interpreter(s, args, m, n, k, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype("float32")
    b = rng.standard_normal((k, n)).astype("float32")
    c = np.full((m, n), np.nan, dtype="float32")
    ts.lower(s, args).run(a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("double_buffer", [False, True], ids=["", "double_buffer"])
@pytest.mark.parametrize("config", gemm.TILE_CONFIGS, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_register_tile_gemm_at_odd_shapes_matches_numpy(shape, config, double_buffer):
    m, n, k = shape
    s, args = gemm.step4(n, m=m, k=k, double_buffer=double_buffer, **config)
    run_in_interpreter(s, args, m, n, k, seed=m + n + k)
    module = ts.build(s, args, target="cuda -arch=sm_90")
    assert "__global__" in module.get_source("cu")


def enclosing_ifs(ir_text, predicate):
    """For each line of the printed IR matching `predicate`: how many `if`/`else` lines enclose
    it (by indentation)."""
    stack, counts = [], []
    for line in ir_text.splitlines():
        if not line.strip() or line.strip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if predicate(line.strip()):
            counts.append(sum(1 for _, is_if in stack if is_if))
        stripped = line.strip()
        stack.append((indent, stripped.startswith("if ") or stripped == "else:"))
    return counts


def test_register_tile_loop_has_no_guard_at_1000():
    s, args = gemm.step4(1000)
    text = str(ts.lower(s, args, target="cuda -arch=sm_90"))
    updates = enclosing_ifs(text, lambda l: l.startswith("C.local[") and "A.shared.local" in l)
    assert len(updates) == 8 * 8 * 8  # ki (8) x the thread's 8 x 8 results, unrolled
    assert max(updates) == 0, "a multiply-add of the register tile is guarded"
    # Guards are left only where the tile meets the matrix's edge: the copies' and the stores'
    # unswitched boundary versions (a handful of lines, not one per multiply-add).
    assert text.count("if ") < 40, text.count("if ")


def test_interior_blocks_copy_with_128_bit_loads():
    s, args = gemm.step4(1000)
    cu = ts.build(s, args, target="cuda -arch=sm_90").get_source("cu")
    # B's rows (1000 floats) are 16-byte aligned: the unswitched interior copy loads float4.
    assert "reinterpret_cast<const float4*>(B" in cu
    # ... and the threads whose 8 x 8 results lie inside C store them 128 bits at a time.
    assert "reinterpret_cast<float4*>(C + " in cu


def test_padded_copies_read_zero_past_the_edge():
    # K = 5 with bk = 8: the last (only) k tile runs 3 columns past A and B; those multiply-adds
    # add zeros, so C is exact even though the register tile loop has no k guard.
    s, args = gemm.step4(16, m=16, k=5, block=16, threads=4, bk=8)
    run_in_interpreter(s, args, 16, 16, 5, seed=3)


def test_double_buffer_pipelines_the_fetch_with_one_barrier_per_iteration():
    s, args = gemm.step4(64, block=32, threads=4, bk=8, double_buffer=True)
    text = str(ts.lower(s, args, target="cuda -arch=sm_90", stop_after="inject_double_buffer"))
    # Two copies of each shared tile, allocated once outside the k loop; registers staging the
    # next fetch; a main loop of 7 iterations and the last computation after it.
    assert "allocate A.shared: float32[2, " in text and "allocate B.shared: float32[2, " in text
    assert "A.shared.stage" in text and "B.shared.stage" in text
    assert "for k.outer in range(0, 7):" in text and "for k.outer in range(7, 8):" in text
    assert text.count("thread_barrier()") == 2  # after the first fetch; once per iteration
    run_in_interpreter(s, args, 64, 64, 64, seed=5)


def test_double_buffer_errors_name_the_stage():
    A = ts.placeholder((64, 64), name="A")
    B = ts.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
    s = ts.create_schedule(B)
    with pytest.raises(ts.ScheduleError, match="double_buffer.*output"):
        s[B].double_buffer()
    # A double-buffered shared stage next to one that is not: the loop cannot be pipelined.
    s, args = gemm.step4(64, block=32, threads=4, bk=8)
    shared = [st for st in s.stages if st.op.name == "A.shared"]
    s[shared[0]].double_buffer()
    with pytest.raises(ts.ScheduleError, match="double_buffer.*every shared stage"):
        ts.lower(s, args, target="cuda -arch=sm_90")
    with pytest.raises(ts.ScheduleError, match="already double-buffered"):
        s[shared[0]].double_buffer()
