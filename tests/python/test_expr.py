# Expressions: operators, literals, dtypes, math intrinsics, casts, constants.
import math

import numpy as np
import pytest

import tessel as ts
from util import rand, run


def test_operators_build_expressions():
    x, y = ts.var("x"), ts.var("y")
    for e in [x + y, x - y, x * y, x / y, x // y, x % y, -x, x + 1, 1 + x, 2 * x, x - 1, 1 - x]:
        assert isinstance(e, ts.Expr) and e.dtype == "int32"
    for e in [x < y, x <= y, x > y, x >= y, x == y, x != y, (x < y) & (y < 3), (x < y) | (y < 3), ~(x < y)]:
        assert e.dtype == "bool"


def test_literals_adapt_to_the_other_operand():
    f = ts.var("f", "float32")
    assert (f + 1).dtype == "float32"
    assert (f * 0.5).dtype == "float32"
    assert (ts.var("d", "float64") + 0.1).dtype == "float64"
    assert (ts.var("l", "int64") + 2**40).dtype == "int64"
    with pytest.raises(ts.DSLError):
        ts.var("i") + 0.5  # a float literal is no int32
    with pytest.raises(ts.DSLError, match="int32"):
        ts.var("i") + f  # mismatched types need a cast


def test_numpy_scalars_are_literals():
    f = ts.var("f", "float32")
    assert (np.float32(2) * f).dtype == "float32"
    assert (f + np.int64(3)).dtype == "float32"


def test_bool_of_symbolic_expression_raises():
    x = ts.var("x")
    with pytest.raises(ts.DSLError, match="truth value"):
        bool(x < 3)
    with pytest.raises(TypeError):
        if x:
            pass


def test_int_and_float_of_constants():
    assert int(ts.const(7)) == 7
    assert float(ts.const(2.5)) == 2.5
    with pytest.raises(ts.DSLError):
        int(ts.var("x"))


def test_const_and_cast():
    assert ts.const(1).dtype == "int32"
    assert ts.const(1.0).dtype == "float32"
    assert ts.const(3, dtype="int8").dtype == "int8"
    assert ts.const(3, dtype=np.float64).dtype == "float64"
    with pytest.raises(ts.DSLError):
        ts.const(300, dtype="int8")
    x = ts.var("x")
    assert ts.cast("float32", x).dtype == "float32"
    assert x.astype("int64").dtype == "int64"
    assert ts.var("v", "float16").dtype == "float16"


def test_repr_is_readable():
    x = ts.var("x")
    assert "x" in repr(x + 1) and "+" in str(x + 1)


UNARY = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
    "rsqrt": lambda a: 1 / np.sqrt(a), "tanh": np.tanh, "sigmoid": lambda a: 1 / (1 + np.exp(-a)),
    "erf": np.vectorize(math.erf), "sin": np.sin, "cos": np.cos, "abs": np.abs,
    "floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_math_intrinsic(name):
    a = np.abs(rand(16)) + 0.25
    if name in ("round",):
        a = np.array([0.2, 1.7, -2.2, 3.1] * 4, dtype="float32")
    A = ts.placeholder((16,), name="A")
    B = ts.compute((16,), lambda i: getattr(ts, name)(A[i]), name="B")
    np.testing.assert_allclose(run([A, B], [a]), UNARY[name](a).astype("float32"), rtol=2e-5, atol=1e-6)


def test_binary_and_ternary_intrinsics():
    a, b = np.abs(rand(8, seed=1)) + 0.5, np.abs(rand(8, seed=2)) + 0.5
    A, B = ts.placeholder((8,), name="A"), ts.placeholder((8,), name="B")
    cases = {
        "pow": (lambda i: ts.pow(A[i], B[i]), a**b),
        "**": (lambda i: A[i] ** B[i], a**b),
        "fma": (lambda i: ts.fma(A[i], B[i], A[i]), a * b + a),
        "max": (lambda i: ts.max(A[i], B[i]), np.maximum(a, b)),
        "min": (lambda i: ts.min(A[i], B[i]), np.minimum(a, b)),
        "select": (lambda i: ts.select(A[i] > B[i], A[i], B[i] * 2), np.where(a > b, a, b * 2)),
        "if_then_else": (lambda i: ts.if_then_else(A[i] > B[i], A[i], 0.0), np.where(a > b, a, 0)),
        "isnan": (lambda i: ts.select(ts.isnan(A[i] - B[i]), 1.0, 2.0), np.full(8, 2.0)),
        "div": (lambda i: A[i] / B[i], a / b),
    }
    for name, (body, expected) in cases.items():
        C = ts.compute((8,), body, name="C")
        np.testing.assert_allclose(run([A, B, C], [a, b]), expected.astype("float32"), rtol=1e-5, err_msg=name)


def test_integer_division_and_modulo_round_toward_minus_infinity():
    a = np.arange(-8, 8, dtype="int32")
    A = ts.placeholder((16,), dtype="int32", name="A")
    for fn, ref in [(lambda x: x // 3, a // 3), (lambda x: x % 3, a % 3),
                    (lambda x: ts.floordiv(x, 3), a // 3), (lambda x: ts.floormod(x, 3), a % 3),
                    (lambda x: ts.truncdiv(x, 3), np.trunc(a / 3).astype("int32")),
                    (lambda x: ts.truncmod(x, 3), np.fmod(a, 3))]:
        B = ts.compute((16,), lambda i: fn(A[i]), name="B")
        np.testing.assert_array_equal(run([A, B], [a]), ref)


def test_limits():
    assert float(ts.max_value("float32")) == float(np.finfo(np.float32).max)
    assert int(ts.min_value("int8")) == -128
    assert math.isinf(float(ts.inf_value("float32")))
