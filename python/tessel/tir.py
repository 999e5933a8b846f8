"""tessel.tir: the expression functions of TVM's ``tvm.tir`` that tensor-expression scripts use
(``tvm.tir.indexdiv``, ``tvm.tir.if_then_else``, ``tvm.tir.Select`` ...), as tessel's own
functions. tessel has no TensorIR: the schedules are TE's (docs/tvm.md)."""
from . import _tessel
from ._tessel import (  # noqa: F401  (re-exported)
    Expr as PrimExpr,
    IterVar,
    Var,
    abs,
    ceil,
    const,
    cos,
    erf,
    exp,
    exp2,
    floor,
    floordiv,
    floormod,
    fma,
    if_then_else,
    isnan,
    log,
    log2,
    max_value,
    min_value,
    round,
    rsqrt,
    sigmoid,
    sin,
    sqrt,
    tanh,
    trunc,
    truncdiv,
    truncmod,
)

indexdiv = _tessel.floordiv
indexmod = _tessel.floormod
div = _tessel.truncdiv
power = _tessel.pow
nearbyint = _tessel.round
Select = _tessel.select
Cast = _tessel.cast


def all(*conditions):  # noqa: A001  (TVM's name)
    """The logical and of `conditions` (tvm.tir.all): ``a & b & ...``."""
    if not conditions:
        raise TypeError("tir.all() needs at least one condition")
    out = conditions[0]
    for c in conditions[1:]:
        out = out & c
    return out


def any(*conditions):  # noqa: A001  (TVM's name)
    """The logical or of `conditions` (tvm.tir.any): ``a | b | ...``."""
    if not conditions:
        raise TypeError("tir.any() needs at least one condition")
    out = conditions[0]
    for c in conditions[1:]:
        out = out | c
    return out
