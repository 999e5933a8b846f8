# Reductions: sum / prod / max / min over axes (with where=), argmax / argmin, comm_reducer.
import numpy as np
import pytest

import tessel as ts
from util import rand, run

N, K = 6, 10


def reduce_with(fn, **kw):
    A = ts.placeholder((N, K), name="A")
    k = ts.reduce_axis((0, K), name="k")
    B = ts.compute((N,), lambda i: fn(A[i, k], axis=k, **kw), name="B")
    return A, B


@pytest.mark.parametrize("name,ref", [("sum", np.sum), ("prod", np.prod), ("max", np.max), ("min", np.min)])
def test_builtin_reducers(name, ref):
    a = rand(N, K) * 0.5 + 1
    A, B = reduce_with(getattr(ts, name))
    np.testing.assert_allclose(run([A, B], [a]), ref(a, axis=1), rtol=1e-5)


def test_where_and_several_axes():
    A = ts.placeholder((N, K), name="A")
    k = ts.reduce_axis((0, K), name="k")
    B = ts.compute((N,), lambda i: ts.sum(A[i, k], axis=[k], where=k < 4), name="B")
    a = rand(N, K)
    np.testing.assert_allclose(run([A, B], [a]), a[:, :4].sum(1), rtol=1e-5)
    r, c = ts.reduce_axis((0, N), name="r"), ts.reduce_axis((0, K), name="c")
    S = ts.compute((1,), lambda i: ts.sum(A[r, c], axis=(r, c)), name="S")
    np.testing.assert_allclose(run([A, S], [a]), [a.sum()], rtol=1e-4)


def test_argmax_and_argmin():
    A = ts.placeholder((N, K), name="A")
    for fn, ref in [(ts.argmax, np.argmax), (ts.argmin, np.argmin)]:
        k = ts.reduce_axis((0, K), name="k")
        idx, val = ts.compute((N,), lambda i: fn(k.var, A[i, k], axis=k), name="R")
        a = rand(N, K)
        got_idx, got_val = run([A, idx, val], [a])
        np.testing.assert_array_equal(got_idx, ref(a, axis=1))


def test_comm_reducer_one_value():
    mysum = ts.comm_reducer(lambda x, y: x + y, lambda t: ts.const(0, dtype=t), name="mysum")
    assert mysum.name == "mysum"
    A, B = reduce_with(mysum)
    a = rand(N, K)
    np.testing.assert_allclose(run([A, B], [a]), a.sum(1), rtol=1e-5)


def test_comm_reducer_identity_as_python_number():
    absmax = ts.comm_reducer(lambda x, y: ts.max(ts.abs(x), ts.abs(y)), lambda t: 0, name="absmax")
    A, B = reduce_with(absmax)
    a = rand(N, K)
    np.testing.assert_allclose(run([A, B], [a]), np.abs(a).max(1), rtol=1e-6)


def test_comm_reducer_two_values():
    # (count, sum) in one reduction
    both = ts.comm_reducer(lambda x, y: (x[0] + y[0], x[1] + y[1]), lambda t0, t1: (0.0, 0.0), name="cs")
    A = ts.placeholder((N, K), name="A")
    k = ts.reduce_axis((0, K), name="k")
    c, s = ts.compute((N,), lambda i: both((A[i, k] * 0 + 1, A[i, k]), axis=k), name="CS")
    a = rand(N, K)
    got_c, got_s = run([A, c, s], [a])
    np.testing.assert_allclose(got_c, np.full(N, K))
    np.testing.assert_allclose(got_s, a.sum(1), rtol=1e-5)


def test_comm_reducer_errors():
    bad = ts.comm_reducer(lambda x, y: (x + y, x), lambda t: 0, name="bad")
    A = ts.placeholder((N, K), name="A")
    k = ts.reduce_axis((0, K), name="k")
    with pytest.raises(ts.DSLError, match="bad"):
        ts.compute((N,), lambda i: bad(A[i, k], axis=k), name="B")
    wrong = ts.comm_reducer(lambda x, y: x + y, lambda t: ts.var("z", t), name="wrong")
    with pytest.raises(ts.DSLError, match="wrong"):
        ts.compute((N,), lambda i: wrong(A[i, k], axis=k), name="B")
    raising = ts.comm_reducer(lambda x, y: 1 / 0, lambda t: 0, name="raising")
    with pytest.raises(ZeroDivisionError):
        ts.compute((N,), lambda i: raising(A[i, k], axis=k), name="B")


def test_max_needs_two_values_or_axis():
    with pytest.raises(ts.DSLError, match="axis"):
        ts.max(ts.var("x"))
