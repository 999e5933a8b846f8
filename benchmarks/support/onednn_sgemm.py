"""oneDNN's dnnl_sgemm through ctypes, for the Python CPU benchmarks' reference (the library the
C++ benchmarks link: Debian's libdnnl, installed by scripts/install-deps.sh --bench).

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
