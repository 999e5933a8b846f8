# Helpers shared by the Python tests: build a default schedule and run it on numpy arrays.
import importlib.util
import os

import numpy as np
import pytest

import tessel as ts
from conftest import REPO_ROOT

HAVE_LLVM = "llvm" in ts.targets()
# Tests that run compiled kernels need the LLVM backend; a build without it skips them.
requires_llvm = pytest.mark.skipif(not HAVE_LLVM, reason="tessel was built without LLVM")


def run(args, inputs, schedule=None, outputs=None):
    """Builds `schedule` (default: a fresh one of the last argument) over `args`, runs it on the
    numpy `inputs` (one per placeholder argument) and returns the outputs as numpy arrays."""
    if not HAVE_LLVM:
        pytest.skip("tessel was built without LLVM")
    n_in = len(inputs)
    outs = args[n_in:]
    s = schedule or ts.create_schedule(list(outs))
    f = ts.build(s, list(args))
    results = [np.zeros([int(d) for d in t.shape], dtype=t.dtype) for t in outs]
    f(*inputs, *results)
    return results if len(results) > 1 else results[0]


def check_matmul_kernel(f, n):
    """Runs the built n x n x n matmul `f` (a, b, c) on random arrays and checks it with numpy."""
    a = np.random.rand(n, n).astype("float32")
    b = np.random.rand(n, n).astype("float32")
    c = np.zeros((n, n), dtype="float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def rand(*shape, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-50, 50, size=shape).astype(dtype)


def tutorial(name):
    """Imports tutorials/<name>.py as a module (its main block does not run)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(REPO_ROOT, "tutorials",
                                                                     name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def replays(s, args):
    """Executes s.to_python() on a fresh schedule and checks it lowers to the same IR."""
    scope = {}
    exec(s.to_python(), scope)
    fresh = ts.create_schedule(s.outputs)
    scope["apply_schedule"](fresh)
    assert str(ts.lower(fresh, args)) == str(ts.lower(s, args))
    assert fresh.to_json() == s.to_json()


def matmul(n, m, k):
    """The tensors A (n×k), B (k×m) and C = A @ B of a matmul."""
    A = ts.placeholder((n, k), name="A")
    B = ts.placeholder((k, m), name="B")
    r = ts.reduce_axis((0, k), name="k")
    C = ts.compute((n, m), lambda i, j: ts.sum(A[i, r] * B[r, j], axis=r), name="C")
    return A, B, C


def check_matmul(s, A, B, C):
    """Builds schedule `s` of a matmul and compares it with numpy on random inputs."""
    a, b = rand(*A.shape, seed=1), rand(*B.shape, seed=2)
    np.testing.assert_allclose(run([A, B, C], [a, b], schedule=s), a @ b, rtol=1e-4, atol=1e-5)
