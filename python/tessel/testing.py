"""tessel.testing: ``tvm.testing.assert_allclose`` for scripts brought over from TVM."""
import numpy as _np


def _as_numpy(x):
    return x.numpy() if hasattr(x, "numpy") and not isinstance(x, _np.ndarray) else x


def assert_allclose(actual, desired, rtol=1e-7, atol=1e-7):
    """numpy.testing.assert_allclose on tessel NDArrays or numpy arrays (TVM's defaults: rtol and
    atol 1e-7). The shapes must match exactly (no broadcasting), as in TVM."""
    actual, desired = _as_numpy(actual), _as_numpy(desired)
    _np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, verbose=True)
    a, d = _np.asarray(actual), _np.asarray(desired)
    if a.shape != d.shape:
        raise AssertionError(f"shapes differ: {a.shape} and {d.shape}")
