# The cached call path (python/src/PyCall.h): a call's argument check is cached per distinct
# argument set (dtype, shape, strides, device, writability), never per object, so every call that
# differs in what the check reads is checked again, and what depends on the data pointer (null,
# alignment, overlap) is checked on every call.
import numpy as np
import pytest

import tessel as ts
from util import requires_llvm


def add_one(n=None):
    n = n if n is not None else ts.var("n")
    A = ts.placeholder((n,), name="A")
    B = ts.compute((n,), lambda i: A[i] + 1.0, name="B")
    return ts.build(ts.create_schedule(B), [A, B]), A, B


@requires_llvm
def test_repeated_calls_check_what_changed():
    f, _, _ = add_one(16)
    a = np.arange(16, dtype="float32")
    for _ in range(3):  # the same set of argument kinds: the cached check
        b = np.zeros(16, "float32")
        f(a, b)
        np.testing.assert_array_equal(b, a + 1)
    with pytest.raises(ts.TesselRuntimeError, match="expected shape"):
        f(np.zeros(17, "float32"), np.zeros(17, "float32"))
    with pytest.raises(ts.TesselRuntimeError, match="dtype"):
        f(a.astype("float64"), np.zeros(16, "float32"))
    with pytest.raises(ts.TesselRuntimeError, match="read-only"):
        ro = np.zeros(16, "float32")
        ro.setflags(write=False)
        f(a, ro)
    with pytest.raises(ts.TesselRuntimeError, match="overlap"):
        f(a, a)  # the output is the input: same keys as a cached call, refused by its pointers
    b = np.zeros(16, "float32")
    f(a, b)  # and the cached call still works
    np.testing.assert_array_equal(b, a + 1)


@requires_llvm
def test_symbolic_extents_are_part_of_the_key():
    f, _, _ = add_one()
    for n in (5, 9, 5, 9, 1):
        a = np.random.default_rng(n).random(n, dtype=np.float32)
        b = np.zeros(n, "float32")
        f(a, b)
        np.testing.assert_allclose(b, a + 1)
    with pytest.raises(ts.TesselRuntimeError, match="'n'"):
        f(np.zeros(4, "float32"), np.zeros(5, "float32"))


@requires_llvm
def test_strided_and_ndarray_arguments():
    f, _, _ = add_one(8)
    base = np.arange(16, dtype="float32")
    for _ in range(2):
        b = np.zeros(8, "float32")
        f(base[::2], b)  # non-contiguous: copied (the general path), never cached as direct
        np.testing.assert_array_equal(b, base[::2] + 1)
        out = np.zeros(16, "float32")
        f(base[:8], out[::2])  # a strided output is written back
        np.testing.assert_array_equal(out[::2], base[:8] + 1)
    a, c = ts.nd.array(base[:8].copy()), ts.nd.empty((8,), "float32")
    for _ in range(2):
        f(a, c)
        np.testing.assert_array_equal(c.numpy(), base[:8] + 1)
    f["main"](a, c)
    with pytest.raises(TypeError, match="'stream' is an int"):
        f(a, c, stream="default")
    with pytest.raises(TypeError, match="must be a tessel NDArray"):
        f([1.0] * 8, c)
