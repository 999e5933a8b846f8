# Schedules: every primitive in both forms (the TVM-style stage view and the index form that
# to_python prints), handles, errors, JSON round trip and to_python replay.
import json

import numpy as np
import pytest

import tessel as ts
import util
from util import rand, replays, run


def matmul(n=24, m=20, k=12):
    return util.matmul(n, m, k)


def check(s, A, B, C):
    util.check_matmul(s, A, B, C)


def test_stage_view_primitives():
    A, B, C = matmul()
    s = ts.create_schedule(C)
    sc = s[C]
    assert sc.name == "C" and sc.index == 2 and s.stages[2] == sc and sc.op == C.op
    i, j = C.op.axis
    (k,) = C.op.reduce_axis
    io, ii = sc.split(i, factor=8)
    jo, ji = sc.split(j, nparts=4)
    assert (io.name, ii.name, io.extent, ii.extent) == ("i0.outer", "i0.inner", 3, 8)
    assert ji.extent == 5 and io.kind == "spatial"
    sc.reorder(io, jo, k, ii, ji)
    assert [v.name for v in sc.leaf_iter_vars] == ["i0.outer", "i1.outer", "k", "i0.inner", "i1.inner"]
    f = sc.fuse(io, jo)
    sc.parallel(f)
    sc.unroll(ii)
    sc.vectorize(ji)
    assert ji.annotation == "vectorize" and f.annotation == "parallel"
    sc.pragma("auto_unroll_max_step", 16)
    assert "parallel" in sc.loop_nest()
    check(s, A, B, C)
    replays(s, [A, B, C])


def test_tile_returns_four_loops():
    A, B, C = matmul(32, 32, 8)
    s = ts.create_schedule(C)
    io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], 16, 8)
    assert [x.name for x in (io, jo, ii, ji)] == ["i0.outer", "i1.outer", "i0.inner", "i1.inner"]
    s[C].vectorize(ji)
    check(s, A, B, C)
    replays(s, [A, B, C])


def test_index_form_as_to_python_prints_it():
    A, B, C = matmul()
    s = ts.create_schedule(C)
    s.split(2, 0, factor=8)
    s.split(2, 2, nparts=2, tail="guard")
    s.reorder(2, [0, 2, 1, 3, 4])
    s.fuse(2, [0, 1])
    s.vectorize(2, 2)
    s.parallel(2, 0)
    s.annotate(2, 1, "unroll")
    s.pragma(2, "auto_unroll_max_step", 8)
    assert s.num_steps == 8
    check(s, A, B, C)
    replays(s, [A, B, C])


def test_compute_location_primitives():
    A = ts.placeholder((16, 16), name="A")
    B = ts.compute((16, 16), lambda i, j: A[i, j] * 2, name="B")
    C = ts.compute((16, 16), lambda i, j: B[i, j] + 1, name="C")
    D = ts.compute((16, 16), lambda i, j: C[i, j] * C[i, j], name="D")
    s = ts.create_schedule(D)
    s[B].compute_inline()
    assert s[B].attach == "inline"
    xo, xi = s[D].split(D.op.axis[0], factor=4)
    s[C].compute_at(s[D], xo)
    assert s[C].attach == "at"
    a = rand(16, 16)
    np.testing.assert_allclose(run([A, D], [a], schedule=s), (a * 2 + 1) ** 2, rtol=1e-5)
    replays(s, [A, D])
    s[C].compute_root()
    assert s[C].attach == "root"
    s.compute_at(2, 3, 0)  # the index form: stage C at D's loop 0
    s.compute_root(s[C])
    replays(s, [A, D])


def test_stage_lookup_by_tensor_index_and_operation():
    A, B, C = matmul()
    s = ts.create_schedule(C)
    assert s[C] == s[2] == s[C.op]
    with pytest.raises(ts.ScheduleError, match="out of range"):
        s[7]
    other = ts.placeholder((3,), name="Other")
    with pytest.raises(ts.ScheduleError):
        s[other]


def test_stale_and_foreign_handles_are_schedule_errors():
    A, B, C = matmul()
    s = ts.create_schedule(C)
    i = C.op.axis[0]
    s[C].split(i, factor=4)
    with pytest.raises(ts.ScheduleError, match="no longer a loop"):
        s[C].split(i, factor=2)
    s2 = ts.create_schedule(C)
    io, _ = s2[C].split(C.op.axis[1], factor=4)
    with pytest.raises(ts.ScheduleError, match="another schedule"):
        s[C].vectorize(io)
    with pytest.raises(ts.ScheduleError, match="not an axis"):
        s[C].vectorize(A.op.output(0).op.axis[0] if A.op.axis else ts.reduce_axis((0, 2), name="z"))
    with pytest.raises(TypeError, match="a loop is a leaf position"):
        s[C].vectorize("i")  # a name is no loop: a wrong type
    with pytest.raises(ts.ScheduleError, match="exactly one"):
        s[C].split(C.op.axis[1], factor=2, nparts=2)
    with pytest.raises(ts.ScheduleError, match="tail"):
        s[C].split(C.op.axis[1], factor=2, tail="sideways")
    with pytest.raises(ts.ScheduleError, match="annotation"):
        s[C].annotate(C.op.axis[1], "sideways")


def test_primitive_errors_come_from_cpp():
    A, B, C = matmul()
    s = ts.create_schedule(C)
    with pytest.raises(ts.ScheduleError, match="vectorize"):
        s[C].vectorize(C.op.reduce_axis[0])
    io, ii = s[C].split(C.op.axis[0], factor=4)
    steps = s.num_steps
    with pytest.raises(ts.ScheduleError, match="reorder"):
        s[C].reorder(io, io)  # a loop given twice
    assert s.num_steps == steps
    with pytest.raises(ts.ScheduleError, match="pragma"):
        s[C].pragma("nonsense", 3)
    with pytest.raises(ts.ScheduleError):
        s[C].compute_inline()  # an output
    assert s.num_steps == steps


def test_json_round_trip_and_copy():
    A, B, C = matmul()
    s = ts.create_schedule(C)
    s[C].tile(C.op.axis[0], C.op.axis[1], 8, 4)
    js = s.to_json()
    assert s.workload_key in js
    t = ts.schedule_from_json(C, js)
    assert str(ts.lower(t, [A, B, C])) == str(ts.lower(s, [A, B, C]))
    c = s.copy()
    c[C].parallel(c[C].leaf_iter_vars[0])
    assert c.num_steps == s.num_steps + 1
    other = ts.compute((3,), lambda i: ts.const(1.0), name="X")
    with pytest.raises(ts.ScheduleError):
        ts.schedule_from_json(other, js)
    with pytest.raises(ts.ScheduleError):
        ts.schedule_from_json(C, "{not json")


def test_json_replays_with_the_limits_it_was_made_with():
    # A GPU schedule may auto-unroll 1024 steps; the default limits (CPU code's) refuse that.
    A, B, C = matmul()
    s = ts.create_schedule(C, max_unroll=1024)
    s[C].pragma("auto_unroll_max_step", 1024)
    js = s.to_json()
    assert "max_unroll=1024" in s.to_python()
    with pytest.raises(ts.ScheduleError, match="auto_unroll_max_step 1024"):
        ts.schedule_from_json(C, js)
    again = ts.schedule_from_json(C, js, max_unroll=1024)
    assert again.to_json() == js


def test_limits_and_multiple_outputs():
    A = ts.placeholder((8,), name="A")
    B = ts.compute((8,), lambda i: A[i] + 1, name="B")
    C = ts.compute((8,), lambda i: A[i] * 2, name="C")
    s = ts.create_schedule([B, C], max_vector_lanes=4, max_unroll=4)
    with pytest.raises(ts.ScheduleError):
        s[B].vectorize(B.op.axis[0])  # 8 lanes > 4
    assert len(s.outputs) == 2 and isinstance(ts.dag_hash([B, C]), int)


def test_lower_options_and_lowered_func():
    A, B, C = matmul()
    s = ts.create_schedule(C)
    f = ts.lower(s, [A, B, C], name="mm", bounds_check=True)
    assert f.name == "mm" and f.args == ["A", "B", "C"]
    assert "assert" in str(f).lower() or "check" in str(f).lower()
    with pytest.raises(ts.ScheduleError):
        ts.lower(s, [A, C])  # B missing


def test_queries():
    A, B, C = matmul()
    s = ts.create_schedule(C)
    io, ii = s[C].split(C.op.axis[0], factor=8)
    st = s[C]
    assert [v.name for v in st.all_iter_vars] == ["i0", "i1", "k", "i0.outer", "i0.inner"]
    assert io.stage == st and isinstance(io.id, int) and "C.i0.outer" in repr(io)
    assert st.leaf_iter_vars[-1].kind == "reduction"
    assert [x.name for x in s.stages] == ["A", "B", "C"] and repr(st) == "Stage(C)"
    assert "i0.outer" in s.loop_nest(C) and s.loop_nest(2) == st.loop_nest()
    assert len(s.workload_key) == 16 and s.outputs[0] == C
    assert C.op.shape == (24, 20) and "k" in repr(C.op.reduce_axis[0])


def test_gpu_thread_binding_and_scope():
    n = 64
    A = ts.placeholder((n, n), name="A")
    As = ts.compute((n, n), lambda i, j: A[i, j] * 2, name="As")
    C = ts.compute((n, n), lambda i, j: As[i, j] + 1, name="C")
    s = ts.create_schedule(C)
    bo, bi = s[C].split(C.op.axis[0], factor=8)
    to, ti = s[C].split(C.op.axis[1], factor=16)
    s[C].bind(bo, "blockIdx.x")
    s[C].bind(ti, "threadIdx.x")
    s[As].set_scope("shared")
    s[As].compute_at(s[C], bo)
    ax = s[As].leaf_iter_vars
    s[As].bind(s[As].split(ax[1], factor=16)[1], "threadIdx.x")
    text = str(ts.lower(s, [A, C]))
    assert "blockIdx.x" in text and "threadIdx.x" in text and "shared" in text
    replays(s, [A, C])
    assert "s.set_scope(" in s.to_python() and 'blockIdx.x"' in s.to_python()
    with pytest.raises(ts.ScheduleError, match="unknown storage scope"):
        s[As].set_scope("texture")
    with pytest.raises(ts.ScheduleError):
        s[C].bind(bi, "threadIdx.x")  # threadIdx.x is bound to another loop of C already
    if "llvm" in ts.targets():
        with pytest.raises(ts.CompileError, match="GPU"):
            ts.build(s, [A, C], target="llvm")


def np_conv_nchw(x, w, stride, pad):
    n, c, h, wd = x.shape
    k, _, r, q = w.shape
    xp = np.pad(x.astype("float64"), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - r) // stride + 1, (wd + 2 * pad - q) // stride + 1
    out = np.zeros((n, k, oh, ow))
    for dy in range(r):
        for dx in range(q):
            patch = xp[:, :, dy:dy + stride * oh:stride, dx:dx + stride * ow:stride]
            out += np.einsum("nchw,kc->nkhw", patch, w[:, :, dy, dx])
    return out


def test_reindex_makes_a_convolution_a_matrix_product():
    # conv2d NCHW as an implicit GEMM: output channels x (images, rows, columns) over (input
    # channels, window rows, window columns); the input and the weight read through gathers.
    x, w = ts.placeholder((2, 5, 9, 11), name="x"), ts.placeholder((7, 5, 3, 3), name="w")
    y = ts.op.conv2d_nchw(x, w, stride=2, padding=1)
    s = ts.create_schedule(y)
    n, k, oh, ow = y.op.axis
    rc, ry, rx = y.op.reduce_axis
    P = s[y].reindex([k, n, oh, ow, rc, ry, rx], [1, 3, 3])
    assert [int(d) for d in P.shape] == [7, 2 * 5 * 6]
    names = [st.name for st in s.stages]
    assert names[-4:] == ["conv2d_nchw.pad.gather", "w.gather", "conv2d_nchw.reindex",
                          "conv2d_nchw"]
    assert [int(d) for d in s.stages[names.index("conv2d_nchw.pad.gather")].op.output(0).shape] \
        == [60, 45]
    (red,) = P.op.reduce_axis
    assert red.var.name == "rc.ry.rx.fused" and int(red.dom[1]) == 45
    # The product is scheduled as any matrix product; the conv copies out of it.
    po, pi = s[P].split(P.op.axis[1], factor=8)
    s[P].reorder(po, red, pi)
    vx, vw = rand(2, 5, 9, 11), rand(7, 5, 3, 3, seed=1)
    np.testing.assert_allclose(run([x, w, y], [vx, vw], s), np_conv_nchw(vx, vw, 2, 1),
                               rtol=1e-4, atol=1e-4)
    replays(s, [x, w, y])


def test_reindex_of_an_nhwc_convolution_and_a_batch_of_products():
    x, w = ts.placeholder((3, 6, 7, 4), name="x"), ts.placeholder((3, 3, 4, 5), name="w")
    y = ts.op.conv2d_nhwc(x, w, stride=1, padding=1, dilation=2)
    s = ts.create_schedule(y)
    P = s[y].reindex(list(y.op.axis) + list(y.op.reduce_axis), [3, 1, 3])
    assert [int(d) for d in P.shape] == [3 * 4 * 5, 5]
    vx, vw = rand(3, 6, 7, 4), rand(3, 3, 4, 5, seed=2)
    # dilation 2: the reference convolves with the window spread out.
    wd = np.zeros((5, 4, 5, 5), "float32")
    wd[:, :, ::2, ::2] = vw.transpose(3, 2, 0, 1)
    ref = np_conv_nchw(vx.transpose(0, 3, 1, 2), wd, 1, 1).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(run([x, w, y], [vx, vw], s), ref, rtol=1e-4, atol=1e-4)
    # A batch of products keeps its batch: (b) x (i) x (j) over (k).
    A, B = ts.placeholder((4, 6, 3), name="A"), ts.placeholder((4, 3, 5), name="B")
    C = ts.op.batch_matmul(A, B)
    s = ts.create_schedule(C)
    b, i, j = C.op.axis
    (kk,) = C.op.reduce_axis
    P = s[C].reindex([b, i, j, kk], [1, 1, 1, 1])
    va, vb = rand(4, 6, 3), rand(4, 3, 5, seed=3)
    np.testing.assert_allclose(run([A, B, C], [va, vb], s), va @ vb, rtol=1e-5, atol=1e-5)
    replays(s, [A, B, C])


def test_reindex_errors_name_the_problem():
    x, w = ts.placeholder((1, 2, 5, 5), name="x"), ts.placeholder((3, 2, 3, 3), name="w")
    y = ts.op.conv2d_nchw(x, w)
    s = ts.create_schedule(y)
    with pytest.raises(ts.ScheduleError, match="group sizes sum to 6, not to the 7 loops"):
        s[y].reindex(list(y.op.axis) + list(y.op.reduce_axis), [1, 3, 2])
    with pytest.raises(ts.ScheduleError, match="mixes data-parallel and reduction"):
        s[y].reindex(list(y.op.axis) + list(y.op.reduce_axis), [1, 2, 4])
    assert json.loads(s.to_json())["steps"] == []
