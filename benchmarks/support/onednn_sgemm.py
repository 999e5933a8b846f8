"""oneDNN through ctypes, for the Python CPU benchmarks' reference (the library the C++ benchmarks
link: Debian's libdnnl, installed by scripts/install-deps.sh --bench): its dnnl_sgemm, and its
matmul primitive with dense's bias and GELU as post-ops (Matmul: support/onednn_matmul.cpp, built
by benchmarks/run.sh, found through TESSEL_BENCH_ONEDNN).

oneDNN's OpenMP threads are as many as OMP_NUM_THREADS says when the library loads: the
benchmark sets it to tessel's thread count first (load() does where it is unset).
"""
import ctypes
import ctypes.util
import os

import numpy as np

_lib = None


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


class Matmul:
    """oneDNN's matmul primitive of `batch` products (m x k) @ (k x n) (B as [batch][n][k] when
    transpose_b), with a bias of n values and a GELU after it when asked; None-like (`ok`
    False) where the helper library was not built."""

    def __init__(self, batch, m, n, k, transpose_b=False, bias=False, gelu=False):
        path = os.environ.get("TESSEL_BENCH_ONEDNN", "")
        self.ok = bool(path) and os.path.exists(path)
        if not self.ok:
            return
        lib = ctypes.CDLL(path)
        lib.tessel_bench_matmul_create.restype = ctypes.c_void_p
        lib.tessel_bench_matmul_create.argtypes = [ctypes.c_int64] * 4 + [ctypes.c_int] * 3
        lib.tessel_bench_matmul_run.restype = ctypes.c_int
        lib.tessel_bench_matmul_run.argtypes = [ctypes.c_void_p] * 5
        lib.tessel_bench_matmul_destroy.argtypes = [ctypes.c_void_p]
        self._lib = lib
        self._handle = lib.tessel_bench_matmul_create(batch, m, n, k, int(transpose_b), int(bias),
                                                      int(gelu))
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
