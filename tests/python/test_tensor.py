# Tensors: placeholder, compute (lambdas traced at the call), reduce_axis, operations' axes.
import numpy as np
import pytest

import tessel as ts
from util import rand, requires_llvm, run


def test_placeholder_properties():
    A = ts.placeholder((3, 4), dtype="int8", name="A")
    assert A.shape == (3, 4) and A.dtype == "int8" and A.name == "A" and A.ndim == 2
    assert A.op.is_placeholder and A.op.axis == []
    assert "A" in repr(A)
    assert A == A and hash(A) == hash(A.op.output(0))


@requires_llvm
def test_symbolic_shape():
    n = ts.var("n")
    A = ts.placeholder((n, 4), name="A")
    assert isinstance(A.shape[0], ts.Expr) and A.shape[1] == 4
    B = ts.compute((n, 4), lambda i, j: A[i, j] * 2, name="B")
    s = ts.create_schedule(B)
    assert "n" in str(ts.lower(s, [A, B]))
    f = ts.build(s, [A, B])
    a = rand(5, 4)
    b = np.zeros_like(a)
    f(a, b)
    np.testing.assert_allclose(b, a * 2)


def test_compute_traces_the_lambda_once_at_the_call():
    calls = []
    A = ts.placeholder((4, 5), name="A")

    def body(i, j):
        calls.append((i, j))
        return A[i, j] + 1

    B = ts.compute((4, 5), body, name="B")
    assert len(calls) == 1 and all(isinstance(v, ts.Var) for v in calls[0])
    assert B.op.name == "B" and len(B.op.axis) == 2 and B.op.reduce_axis == []
    assert B.op.input_tensors[0] == A
    assert B.op.body[0].dtype == "float32"


def test_compute_with_scalar_bodies_and_args():
    B = ts.compute((4,), lambda i: 1.5, name="B")
    assert B.dtype == "float32"
    C = ts.compute((4,), lambda *idx: idx[0] * 2, name="C")
    assert C.dtype == "int32"
    np.testing.assert_array_equal(run([C], []), np.arange(4) * 2)


def test_multi_output_compute():
    A = ts.placeholder((6,), name="A")
    outs = ts.compute((6,), lambda i: (A[i] + 1, A[i] * 2), name="P")
    assert isinstance(outs, list) and len(outs) == 2
    assert outs[0].op == outs[1].op and outs[1].value_index == 1 and outs[0].op.num_outputs == 2


def test_reduce_axis_dom_is_begin_end():
    k = ts.reduce_axis((2, 10), name="k")
    assert k.dom == (2, 8) and k.kind == "reduce" and k.name == "k"
    A = ts.placeholder((10,), name="A")
    S = ts.compute((1,), lambda i: ts.sum(A[k], axis=k), name="S")
    a = rand(10)
    np.testing.assert_allclose(run([A, S], [a]), [a[2:].sum()], rtol=1e-5)


def test_axis_arithmetic_and_tensor_call_syntax():
    A = ts.placeholder((8,), name="A")
    B = ts.compute((4,), lambda i: A(i * 2) + A[i * 2 + 1], name="B")
    a = rand(8)
    np.testing.assert_allclose(run([A, B], [a]), a[0::2] + a[1::2], rtol=1e-6)


def test_operation_output_out_of_range():
    A = ts.placeholder((4,), name="A")
    with pytest.raises(IndexError):
        A.op.output(3)


def test_flop_count():
    A = ts.placeholder((8, 4), name="A")
    B = ts.placeholder((4, 6), name="B")
    k = ts.reduce_axis((0, 4), name="k")
    C = ts.compute((8, 6), lambda i, j: ts.sum(A[i, k] * B[k, j], axis=k), name="C")
    assert ts.flop_count(C) == 2 * 8 * 6 * 4
