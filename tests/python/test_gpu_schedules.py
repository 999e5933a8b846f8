# GPU schedules checked without a GPU: the loop interpreter runs them as SPMD programs (race
# detector on) against numpy, and NVRTC compiles them for sm_90. Cooperative fetches (a shared
# stage inside thread loops rebinding the threads) and compute_at at the stage that a stage's
# consumers are computed at.
import numpy as np
import pytest

import tessel as ts
from util import matmul, rand


def register_tile_gemm(n, shared_at_consumer):
    A, B, C = matmul(n, n, n)
    s = ts.create_schedule(C)
    AS = s.cache_read(A, "shared", [C])
    AL = s.cache_read(AS, "local", [C]) if shared_at_consumer else None
    CL = s.cache_write(C, "local")
    by, yi = s[C].split(C.op.axis[0], factor=16)
    bx, xi = s[C].split(C.op.axis[1], factor=16)
    ty, yi = s[C].split(yi, nparts=4)
    tx, xi = s[C].split(xi, nparts=4)
    s[C].reorder(by, bx, ty, tx, yi, xi)
    for loop, tag in ((by, "blockIdx.y"), (bx, "blockIdx.x"), (ty, "threadIdx.y"),
                      (tx, "threadIdx.x")):
        s[C].bind(loop, tag)
    s[CL].compute_at(s[C], tx)
    (k,) = CL.op.reduce_axis
    ko, ki = s[CL].split(k, factor=4)
    i, j = CL.op.axis
    s[CL].reorder(ko, ki, i, j)
    if AL is not None:
        s[AL].compute_at(s[CL], ki)
    s[AS].compute_at(s[CL], ko)  # inside C's thread loops
    a, b = AS.op.axis
    t = s[AS].fuse(a, b)  # the 16 x 4 tile over the 4 x 4 threads
    t, tx2 = s[AS].split(t, factor=4)
    t, ty2 = s[AS].split(t, factor=4)
    s[AS].bind(ty2, "threadIdx.y")
    s[AS].bind(tx2, "threadIdx.x")
    return s, [A, B, C]


@pytest.mark.parametrize("shared_at_consumer", [False, True])
def test_cooperative_fetch_inside_thread_loops(shared_at_consumer):
    n = 32
    s, args = register_tile_gemm(n, shared_at_consumer)
    lowered = ts.lower(s, args)
    text = str(lowered)
    assert "A.shared: float32[64] (shared)" in text, text  # the block's 16 x 4 tile, not one row
    a, b = rand(n, n, seed=1), rand(n, n, seed=2)
    c = np.full((n, n), np.nan, dtype="float32")
    lowered.run(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    module = ts.build(s, args, target="cuda -arch=sm_90")
    assert "__syncthreads()" in module.get_source("cu")


def test_compute_at_needs_a_consumer_or_their_stage():
    A, B, C = matmul(16, 16, 16)
    s = ts.create_schedule(C)
    AS = s.cache_read(A, "shared", [C])
    AL = s.cache_read(AS, "local", [C])
    # AL (AS's only consumer) is at the root: C is neither AS's consumer nor where AL is. As in
    # TVM, the call is accepted (AL may still be moved into C); lowering checks the finished
    # schedule and names both stages.
    s[AS].compute_at(s[C], C.op.axis[0])
    with pytest.raises(ts.ScheduleError, match="'A.shared' is computed at 'C'.*reader 'A.shared.local'"):
        ts.lower(s, [A, B, C])
    s[AL].compute_at(s[C], C.op.axis[1])  # now every consumer of AS is computed at C
    a, b = rand(16, 16, seed=1), rand(16, 16, seed=2)
    c = np.zeros((16, 16), "float32")
    ts.lower(s, [A, B, C]).run(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    # A reader that is an output can never be inside another stage: refused at the call.
    A2, B2, C2 = matmul(16, 16, 16)
    s2 = ts.create_schedule(C2)
    AS2 = s2.cache_read(A2, "shared", [C2])
    D = s2.cache_read(B2, "shared", [C2])
    with pytest.raises(ts.ScheduleError, match="does not read 'A.shared'.*an output"):
        s2[AS2].compute_at(s2[D], s2[D].op.axis[0])
