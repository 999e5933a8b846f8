"""oneDNN through ctypes, for the Python CPU benchmarks' reference (the library the C++ benchmarks
link: Debian's libdnnl, installed by scripts/install-deps.sh --bench): its dnnl_sgemm, and its
matmul primitive (support/onednn_matmul.cpp, built by benchmarks/run.sh, found through
TESSEL_BENCH_ONEDNN): float32 with dense's bias and GELU as post-ops (Matmul), and int8 or
bfloat16 with the weights packed once in oneDNN's layout (PackedMatmul).

oneDNN's OpenMP threads are as many as OMP_NUM_THREADS says when the library loads: the
benchmark sets it to tessel's thread count first (load() does where it is unset).
"""
import ctypes
import ctypes.util
import os

import numpy as np

_lib = None
_helper = None  # the helper library once loaded; False where it is not built


def load(threads):
    """Loads libdnnl with `threads` OpenMP threads (unless OMP_NUM_THREADS says otherwise);
    None where the library is missing."""
    global _lib
    if _lib is not None:
        return _lib
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    name = ctypes.util.find_library("dnnl")
    if not name:
        return None
    lib = ctypes.CDLL(name)
    f = lib.dnnl_sgemm
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_char, ctypes.c_char, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                  ctypes.c_float, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                  ctypes.c_int64, ctypes.c_float, ctypes.c_void_p, ctypes.c_int64]
    _lib = lib
    return lib


def sgemm(a, b, c, transpose_b=False):
    """c = a @ b (or a @ b.T), row-major float32 arrays, through dnnl_sgemm; a batch of matrices
    (3-D arrays) one call per matrix."""
    if a.ndim == 3:
        for i in range(a.shape[0]):
            sgemm(a[i], b[i], c[i], transpose_b)
        return c
    m, k = a.shape
    n = b.shape[0] if transpose_b else b.shape[1]
    status = _lib.dnnl_sgemm(b"N", b"T" if transpose_b else b"N", m, n, k, 1.0,
                             a.ctypes.data, k, b.ctypes.data, b.shape[1], 0.0, c.ctypes.data, n)
    if status != 0:
        raise RuntimeError(f"dnnl_sgemm failed with status {status}")
    return c


def check(a, b, c, transpose_b=False):
    """Raises when c differs from numpy's product."""
    ref = np.matmul(a, np.swapaxes(b, -1, -2) if transpose_b else b)
    np.testing.assert_allclose(c, ref, rtol=1e-3, atol=1e-3 * max(1.0, float(np.abs(ref).max())))


def helper():
    """The helper library (support/onednn_matmul.cpp) with its functions' signatures, or None
    where it was not built."""
    global _helper
    if _helper is not None:
        return _helper or None
    path = os.environ.get("TESSEL_BENCH_ONEDNN", "")
    if not path or not os.path.exists(path):
        _helper = False
        return None
    lib = ctypes.CDLL(path)
    p, i64, i = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
    for name, restype, argtypes in [
            ("matmul_create", p, [i64] * 4 + [i] * 3),
            ("matmul_run", i, [p] * 5),
            ("matmul_destroy", None, [p]),
            ("packed_create", p, [i64] * 3 + [ctypes.c_char_p] * 3 + [i]),
            ("packed_impl", ctypes.c_char_p, [p]),
            ("packed_set_weights", i, [p, p]),
            ("packed_run", i, [p, p, p]),
            ("packed_destroy", None, [p]),
            ("set_verbose", None, [i])]:
        f = getattr(lib, "tessel_bench_" + name)
        f.restype, f.argtypes = restype, argtypes
    _helper = lib
    return lib


class Matmul:
    """oneDNN's matmul primitive of `batch` products (m x k) @ (k x n) (B as [batch][n][k] when
    transpose_b), with a bias of n values and a GELU after it when asked; None-like (`ok`
    False) where the helper library was not built."""

    def __init__(self, batch, m, n, k, transpose_b=False, bias=False, gelu=False):
        self._lib = helper()
        self.ok = self._lib is not None
        if not self.ok:
            return
        self._handle = self._lib.tessel_bench_matmul_create(batch, m, n, k, int(transpose_b),
                                                            int(bias), int(gelu))
        self.ok = bool(self._handle)

    def __call__(self, a, b, bias, c):
        status = self._lib.tessel_bench_matmul_run(
            self._handle, a.ctypes.data, b.ctypes.data, bias.ctypes.data if bias is not None
            else None, c.ctypes.data)
        if status != 0:
            raise RuntimeError("oneDNN's matmul failed")
        return c

    def __del__(self):
        if getattr(self, "ok", False):
            self._lib.tessel_bench_matmul_destroy(self._handle)


class PackedMatmul:
    """oneDNN's matmul primitive of one product (m x k) @ (k x n) with the dtypes given (numpy's
    names: "uint8" @ "int8" -> "int32", "bfloat16" @ "bfloat16" -> "float32" or "bfloat16"), its
    weights in the layout its implementation prefers: set_weights(b) reorders the plain B ([k][n],
    [n][k] when transpose_b) into it once, then each call c = a @ B runs the product alone.
    `impl` is the implementation's name (as ONEDNN_VERBOSE prints it). Raises RuntimeError where
    the helper library was not built or oneDNN has no implementation."""

    def __init__(self, m, n, k, src_dtype, weights_dtype, dst_dtype, transpose_b=False):
        self._lib, self._handle = helper(), None
        if self._lib is None:
            raise RuntimeError("the oneDNN helper library (TESSEL_BENCH_ONEDNN) is not built")
        self._handle = self._lib.tessel_bench_packed_create(
            m, n, k, src_dtype.encode(), weights_dtype.encode(), dst_dtype.encode(),
            int(transpose_b))
        if not self._handle:
            raise RuntimeError(f"oneDNN has no matmul {src_dtype} x {weights_dtype} -> "
                               f"{dst_dtype} here (its message above)")
        self.impl = self._lib.tessel_bench_packed_impl(self._handle).decode()

    def set_weights(self, b):
        if self._lib.tessel_bench_packed_set_weights(self._handle, b.ctypes.data) != 0:
            raise RuntimeError("oneDNN's reorder of the weights failed")

    def __call__(self, a, c):
        if self._lib.tessel_bench_packed_run(self._handle, a.ctypes.data, c.ctypes.data) != 0:
            raise RuntimeError("oneDNN's matmul failed")
        return c

    def __del__(self):
        if self._handle:
            self._lib.tessel_bench_packed_destroy(self._handle)


def set_verbose(level):
    """oneDNN's verbose level from now on (what ONEDNN_VERBOSE set at the start); its lines go
    to the C library's stdout, flushed here."""
    helper().tessel_bench_set_verbose(level)
