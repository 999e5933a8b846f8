# Tracing errors: Python control flow on symbolic values and malformed lambdas fail loudly with
# DSLError (a TypeError) instead of mis-tracing.
import pytest

import tessel as ts

A = ts.placeholder((8, 8), name="A")


@pytest.mark.parametrize(
    "body",
    [
        lambda i: A[i, 0] if A[i, 0] > 0 else A[i, 1],  # if
        lambda i: (A[i, 0] > 0) and A[i, 1],  # and
        lambda i: (A[i, 0] > 0) or A[i, 1],  # or
        lambda i: not (A[i, 0] > 0),  # not
        lambda i: max(A[i, 0], A[i, 1]),  # Python's max
        lambda i: min(A[i, 0], A[i, 1]),  # Python's min
        lambda i: A[i, 0] if i == 0 else A[i, 1],  # a branch on the index
    ],
)
def test_python_control_flow_raises(body):
    with pytest.raises(ts.DSLError, match="truth value"):
        ts.compute((8,), body, name="B")


def test_wrong_arity():
    with pytest.raises(ts.DSLError, match="takes 1 indices for a 2-D shape"):
        ts.compute((8, 8), lambda i: A[i, 0], name="B")


def test_body_of_wrong_type():
    with pytest.raises(ts.DSLError, match="compute 'B'"):
        ts.compute((8,), lambda i: "text", name="B")
    with pytest.raises(ts.DSLError):
        ts.compute((8,), lambda i: None, name="B")


def test_wrong_index_count_and_constant_out_of_range():
    with pytest.raises(ts.DSLError, match="A"):
        ts.compute((8,), lambda i: A[i], name="B")
    with pytest.raises(ts.DSLError, match="A"):
        ts.compute((8,), lambda i: A[i, 9], name="B")


def test_float_index():
    with pytest.raises(ts.DSLError):
        ts.compute((8,), lambda i: A[i, 0.5], name="B")


def test_python_exception_in_lambda_propagates():
    def body(i):
        raise KeyError("from the lambda")

    with pytest.raises(KeyError, match="from the lambda"):
        ts.compute((8,), body, name="B")


def test_reduce_axis_misuse():
    k = ts.reduce_axis((0, 8), name="k")
    with pytest.raises(ts.DSLError):
        ts.compute((8,), lambda i: A[i, k], name="B")  # outside a reduction
    with pytest.raises(ts.DSLError):
        ts.compute((8,), lambda i: ts.sum(A[i, k], axis=k) + 1, name="B")  # not top level
    with pytest.raises(ts.DSLError, match="axis"):
        ts.compute((8,), lambda i: ts.sum(A[i, k]), name="B")  # no axis


def test_mismatched_dtypes():
    I = ts.placeholder((8,), dtype="int32", name="I")
    with pytest.raises(ts.DSLError, match="int32"):
        ts.compute((8,), lambda i: A[i, 0] + I[i], name="B")
