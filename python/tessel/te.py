"""tessel.te: the names of TVM's ``tvm.te`` (TVM <= 0.19), so that a tensor-expression script runs
after ``import tessel as tvm`` and ``from tessel import te`` (docs/tvm.md has the table).

Every name here is tessel's own function or class (the same object as ``tessel.<name>``), not a
second API: ``te.compute is tessel.compute``. What TVM has and tessel does not is absent, so a
script using it fails at the name; docs/tvm.md says what to use instead.
"""
from . import _tessel
from ._tessel import (  # noqa: F401  (re-exported)
    Operation,
    Schedule,
    Stage,
    Tensor,
    ThreadAxis,
    abs,
    ceil,
    comm_reducer,
    compute,
    const,
    cos,
    create_schedule,
    erf,
    exp,
    exp2,
    floor,
    floordiv,
    floormod,
    if_then_else,
    isnan,
    log,
    log2,
    max,
    min,
    placeholder,
    reduce_axis,
    round,
    rsqrt,
    sigmoid,
    sin,
    sqrt,
    sum,
    tanh,
    thread_axis,
    trunc,
    truncdiv,
    truncmod,
    var,
)

# TVM's other spellings of the same functions.
size_var = _tessel.var
power = _tessel.pow
indexdiv = _tessel.floordiv  # index arithmetic: floor division (TVM's indexdiv on indices >= 0)
indexmod = _tessel.floormod
div = _tessel.truncdiv  # tir.div: C's truncating division
nearbyint = _tessel.round
