"""tessel.op: the operator library (docs/operators.md).

Operators with shape and parameter checks (DSLError, a TypeError, naming the parameter), default
schedules for "llvm" and "cuda", and network presets. A thin re-export of the C++ library:

    import tessel as ts
    x = ts.placeholder((1, 3, 32, 32), name="x")
    w = ts.placeholder((8, 3, 3, 3), name="w")
    y = ts.op.relu(ts.op.conv2d_nchw(x, w, stride=2, padding=1))
    s = ts.op.default_schedule(y, "llvm")
"""
from . import _tessel

# The extension's `op` submodule is no importable module of its own: copy its public names.
globals().update({k: v for k, v in vars(_tessel.op).items() if not k.startswith("_")})
