# Stage-inserting and layout primitives: cache_read, cache_write, storage_split / storage_reorder /
# storage_align, follow_split and rfactor, each in the TVM-style form and the index form that
# to_python prints, run against numpy, replayed, and their user errors as ts.ScheduleError.
import numpy as np
import pytest

import tessel as ts
import util
from util import rand, replays, run


def matmul(n=24, m=32, k=12):
    return util.matmul(n, m, k)


def check(s, A, B, C):
    util.check_matmul(s, A, B, C)
    replays(s, [A, B, C])


def row_reduce(fn, n=5, m=30):
    X = ts.placeholder((n, m), name="X")
    k = ts.reduce_axis((0, m), name="k")
    return X, k, ts.compute((n,), lambda i: fn(X[i, k], axis=k), name="R")


@pytest.mark.parametrize("scope", ["global", "shared", "local"])
def test_cache_read_tvm_form(scope):
    A, B, C = matmul()
    s = ts.create_schedule(C)
    sc = s[C]
    AA = s.cache_read(A, scope, [C])
    assert isinstance(AA, ts.Tensor) and AA.name == "A." + scope
    assert [st.name for st in s.stages] == ["A", "A." + scope, "B", "C"]
    assert sc.index == 3 and s[C] == sc  # the handle follows its stage past the insertion
    io, ii = s[C].split(C.op.axis[0], factor=8)
    s[AA].compute_at(s[C], io)
    assert s[AA].attach == "at"
    check(s, A, B, C)
    assert f's.cache_read(0, "{scope}", [2])' in s.to_python()


def test_cache_read_index_form_and_reader_handles():
    A, B, C = matmul()
    s = ts.create_schedule(C)
    s.cache_read(0, "shared", [2])  # as to_python prints it
    BB = s.cache_read(s[B], "local", s[C])  # a Stage handle, a single reader
    assert [st.name for st in s.stages] == ["A", "A.shared", "B", "B.local", "C"]
    s.compute_at(BB, C, 0)
    check(s, A, B, C)


def test_cache_write_register_tile():
    A, B, C = matmul(30, 48, 16)
    s = ts.create_schedule(C)
    CL = s.cache_write(C, "local")
    assert CL.name == "C.local" and [st.name for st in s.stages] == ["A", "B", "C.local", "C"]
    # C.op.axis still names C's loops, which cache_write rebuilt.
    io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], 4, 16)
    s[CL].compute_at(s[C], jo)
    i, j = s[CL].op.axis
    (k,) = s[CL].op.reduce_axis
    s[CL].reorder(k, i, j)
    s[CL].vectorize(j)
    s[C].vectorize(ji)
    assert "C.local" in str(ts.lower(s, [A, B, C]))
    check(s, A, B, C)


@pytest.mark.parametrize("scope", ["global", "shared", "local"])
def test_cache_write_index_form(scope):
    A, B, C = matmul()
    s = ts.create_schedule(C)
    s.cache_write(2, scope)
    s.split(3, 0, factor=8)
    s.compute_at(2, 3, 0)
    check(s, A, B, C)


def test_storage_layout_packs_b_tvm_form():
    A, B, C = matmul(24, 64, 32)
    s = ts.create_schedule(C)
    BP = s.cache_read(B, "global", [C])
    s[BP].storage_split(1, 16)  # [k][n.outer][n.inner]
    s[BP].storage_reorder(1, 0, 2)  # [n.outer][k][n.inner]: column panels
    s[BP].storage_align(BP.op.axis[0], 8, 1)  # an axis still stored whole
    jo, ji = s[C].split(C.op.axis[1], factor=16)
    s[C].reorder(jo, C.op.axis[0], C.op.reduce_axis[0], ji)
    s[C].vectorize(ji)
    check(s, A, B, C)


def test_storage_layout_index_form():
    A, B, C = matmul(16, 16, 8)
    s = ts.create_schedule(C)
    s.cache_read(1, "shared", [2])
    s.storage_split(2, 1, 4)
    s.storage_reorder(2, [1, 0, 2])
    s.storage_align(2, 1, 8, 1)
    s.compute_at(2, 3, 0)
    check(s, A, B, C)


def test_follow_split_both_forms():
    A, B, C = matmul(24, 20, 12)
    s = ts.create_schedule(C)
    CL = s.cache_write(C, "local")
    s[C].split(C.op.axis[1], factor=4)
    src = s.num_steps - 1
    jo, ji = s[CL].follow_split(s[CL].op.axis[1], src)
    assert (jo.extent, ji.extent) == (5, 4) and jo.stage == s[CL]
    check(s, A, B, C)

    s = ts.create_schedule(C)
    s.cache_read(0, "shared", [2])
    s.split(3, 0, nparts=3)
    s.follow_split(1, 0, 1)  # A.shared's i0 as step 1
    assert s[1].leaf_iter_vars[0].extent == 3
    check(s, A, B, C)


@pytest.mark.parametrize("part", [0, 1])
@pytest.mark.parametrize("factor_axis", [0, 1])
def test_rfactor_tvm_form(part, factor_axis):
    X, k, R = row_reduce(ts.sum)
    s = ts.create_schedule(R)
    ko, ki = s[R].split(k, factor=8)  # 30 = 3 * 8 + 6: guarded partial results
    RF = s.rfactor(R, (ko, ki)[part], factor_axis=factor_axis)
    assert RF.name == "R.rf" and [st.name for st in s.stages] == ["X", "R.rf", "R"]
    assert [int(d) for d in RF.shape] == ([4, 5] if part == 0 else [8, 5])[:: 1 - 2 * factor_axis]
    # The reduction over the partial results: R has a fresh loop nest.
    (kr,) = s[R].op.reduce_axis
    assert [v.name for v in s[R].leaf_iter_vars][-1] == kr.var.name
    s[RF].compute_at(s[R], R.op.axis[0])
    x = rand(5, 30)
    np.testing.assert_allclose(run([X, R], [x], schedule=s), x.sum(axis=1), rtol=1e-5, atol=1e-5)
    replays(s, [X, R])


@pytest.mark.parametrize("fn, ref", [(ts.max, np.max), (ts.min, np.min), (ts.sum, np.sum)])
def test_rfactor_index_form_vectorized(fn, ref):
    X, k, R = row_reduce(fn, 6, 64)
    s = ts.create_schedule(R)
    s.split(1, 1, factor=16)
    s.rfactor(1, 2, 1)  # as to_python prints it: R.rf[i, k.inner]
    s.reorder(1, [0, 2, 1])  # i, k.inner.rest, k.inner
    s.vectorize(1, 2)
    s.parallel(2, 0)
    x = rand(6, 64)
    np.testing.assert_allclose(run([X, R], [x], schedule=s), ref(x, axis=1), rtol=1e-5, atol=1e-5)
    replays(s, [X, R])


def test_handles_across_inserted_stages():
    A, B, C = matmul()
    s = ts.create_schedule(C)
    io, ii = s[C].split(C.op.axis[0], factor=8)
    s.cache_read(A, "local", [C])  # rebuilds C's operation, keeps its loops
    s[C].vectorize(s[C].split(C.op.axis[1], factor=8)[1])
    s[C].parallel(io)  # a handle from before the insertion
    assert io.annotation == "parallel"
    check(s, A, B, C)

    X, k, R = row_reduce(ts.sum)
    s = ts.create_schedule(R)
    ko, ki = s[R].split(k, factor=8)
    s.rfactor(R, ki)
    with pytest.raises(ts.ScheduleError, match="new loop nest"):
        s[R].unroll(ko)  # R's loops were replaced
    with pytest.raises(ts.ScheduleError, match="new loop nest"):
        ko.name


def test_errors_are_schedule_errors():
    A, B, C = matmul()
    s = ts.create_schedule(C)
    with pytest.raises(ts.ScheduleError, match="unknown storage scope"):
        s.cache_read(A, "texture", [C])
    with pytest.raises(ts.ScheduleError, match="unknown storage scope"):
        s.cache_write(C, "texture")
    with pytest.raises(ts.ScheduleError, match="does not read"):
        s.cache_read(A, "shared", [B])  # B is no reader of A
    with pytest.raises(ts.ScheduleError, match="rfactor"):
        s.rfactor(C, C.op.axis[0])  # a data-parallel axis
    with pytest.raises(ts.ScheduleError, match="split"):
        s.rfactor(C, C.op.reduce_axis[0])  # not a part of a split reduce axis
    with pytest.raises(ts.ScheduleError, match="output"):
        s[C].storage_split(0, 4)  # the caller's buffer keeps its layout
    assert s.num_steps == 0
    BP = s.cache_read(B, "global", [C])
    s[BP].storage_split(1, 8)
    with pytest.raises(ts.ScheduleError, match="stored split"):
        s[BP].storage_align(BP.op.axis[1], 8, 1)
    with pytest.raises(ts.ScheduleError, match="permutation"):
        s[BP].storage_reorder(0, 1)
    with pytest.raises(ts.ScheduleError, match="offset"):
        s[BP].storage_align(0, 8, 9)
    s[C].split(C.op.axis[0], factor=4)
    with pytest.raises(ts.ScheduleError, match="cache_write"):
        s.cache_write(C, "local")  # after a loop transformation of C
    with pytest.raises(ts.ScheduleError):
        s.follow_split(BP, 0, 0)  # step 0 is no split
    with pytest.raises(TypeError, match="a stage is an index, a tensor"):
        s.cache_read(A, "shared", ["C"])  # a name is no stage: a wrong type
    assert s.num_steps == 3
