# reverse_compute_at from Python (docs/schedule.md, "reverse_compute_at"): an epilogue computed
# after each tile of its producer on the CPU, and split-K in one GPU kernel, the last block to
# finish a tile of partial sums summing its parts (run in the loop interpreter, SPMD), both
# against numpy, replayed from to_python; the user errors as ts.ScheduleError.
import numpy as np
import pytest

import tessel as ts
import util
from util import rand, replays, run


def test_epilogue_after_each_tile():
    A = ts.placeholder((10, 12), name="A")
    B = ts.compute((10, 12), lambda i, j: A[i, j] * 2.0, name="B")
    R = ts.compute((10, 12), lambda i, j: ts.max(B[i, j] - 1.0, 0.0), name="R")
    s = ts.create_schedule(R)
    io, ii = s[B].split(B.op.axis[0], factor=4)
    s[R].reverse_compute_at(s[B], io)
    assert "reverse_compute_at" in s.to_python()
    a = rand(10, 12)
    np.testing.assert_allclose(run([A, R], [a], schedule=s), np.maximum(a * 2 - 1, 0), rtol=1e-6)
    replays(s, [A, R])


def split_k_schedule(gpu=True):
    A = ts.placeholder((40, 96), name="A")
    B = ts.placeholder((96, 24), name="B")
    k = ts.reduce_axis((0, 96), name="k")
    C = ts.compute((40, 24), lambda i, j: ts.sum(A[i, k] * B[k, j], axis=k), name="C")
    Y = ts.compute((40, 24), lambda i, j: C[i, j] * 0.5, name="Y")
    s = ts.create_schedule(Y)
    ko, ki = s[C].split(k, nparts=4)
    P = s.rfactor(C, ko, factor_axis=0)  # P[part, i, j]
    p, i, j = P.op.axis
    io, ii = s[P].split(i, factor=8)
    jo, ji = s[P].split(j, factor=8)
    s[P].reorder(p, io, jo, ii, ji)
    tile = s[P].fuse(p, io, jo)
    if gpu:
        s[P].bind(tile, "blockIdx.x")
        s[P].bind(ii, "threadIdx.y")
        s[P].bind(ji, "threadIdx.x")
    s[Y].reverse_compute_at(s[P], tile)
    yi, yj = s[Y].leaf_iter_vars
    if gpu:
        s[Y].bind(yi, "threadIdx.y")
        s[Y].bind(yj, "threadIdx.x")
    s[C].compute_at(s[Y], yj)
    return s, A, B, Y


@pytest.mark.parametrize("gpu", [True, False], ids=["blocks", "serial"])
def test_split_k_last_block_sums_the_parts(gpu):
    s, A, B, Y = split_k_schedule(gpu)
    text = str(ts.lower(s, [A, B, Y]))
    assert "tile_arrive(" in text and "zeroed_workspace" in text
    a, b = rand(40, 96), rand(96, 24)
    y = np.full((40, 24), np.nan, dtype="float32")
    ts.lower(s, [A, B, Y]).run(a, b, y)
    np.testing.assert_allclose(y, (a.astype("float64") @ b) * 0.5, rtol=1e-4, atol=1e-4)
    replays(s, [A, B, Y])
    if util.HAVE_LLVM and not gpu:  # a CPU target refuses the arrival, saying why
        with pytest.raises(ts.CompileError, match="tile_arrive"):
            ts.build(s, [A, B, Y])


def test_errors():
    A = ts.placeholder((8, 8), name="A")
    B = ts.compute((8, 8), lambda i, j: A[i, j] + 1.0, name="B")
    R = ts.compute((8, 8), lambda i, j: B[i, 0] * 2.0, name="R")
    s = ts.create_schedule(R)
    with pytest.raises(ts.ScheduleError, match="neither one of its own axes"):
        s[R].reverse_compute_at(s[B], B.op.axis[0])
    k = ts.reduce_axis((0, 8), name="k")
    S = ts.compute((8,), lambda i: ts.sum(A[i, k], axis=k), name="S")
    T = ts.compute((8,), lambda i: S[i] * 2.0, name="T")
    s = ts.create_schedule(T)
    with pytest.raises(ts.ScheduleError, match="reduction"):
        s[T].reverse_compute_at(s[S], s[S].leaf_iter_vars[1])
