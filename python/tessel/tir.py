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
