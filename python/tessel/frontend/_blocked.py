"""Blocked activations in an imported model: `from_onnx(..., layout="NCHW16c")` (docs/models.md,
"Blocked activations").

Convolutions whose output channels divide into blocks of `block` run as `op.conv2d_nchwc` on
activations (N, C / b, H, W, b), their weights blocked once at import; the element-wise operators
and the pools between them keep the layout, so the layers agree on it and the model transforms
only at its edges: an NCHW tensor into blocks before the first blocked convolution that reads it
(`op.nchw_to_nchwc`; the RGB input in one block of its 3 channels), and a blocked tensor back
(`op.nchwc_to_nchw`) where an operator that does not keep the layout (a flatten, a matrix
product, a model output) reads it.

A blocked tensor is a value of its own, named `<onnx name>@nchw<b>c`; the ONNX name stays the
NCHW tensor, made from the blocked one by an unblocking node when something reads it."""
import re

import numpy as np

from .. import _tessel as _ts
from .. import op as _op
from ._ops import _check_2d, _pads

# Operators that keep blocked activations: element-wise ones of one run-time input (their other
# inputs scalar constants), of two blocked inputs of one shape, and the pools.
UNARY = {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Abs", "Neg", "Erf", "Clip", "Cast"}
BINARY = {"Add", "Sub", "Mul", "Div", "Max", "Min"}
POOLS = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"}


def parse_layout(layout):
    """The channel block of `layout` ("NCHW": 0, "NCHW<b>c": b, 2 <= b <= 64)."""
    if layout == "NCHW":
        return 0
    m = re.fullmatch(r"NCHW(\d+)c", str(layout))
    if not m or not 2 <= int(m.group(1)) <= 64:
        raise ValueError(f"from_onnx: layout {layout!r} is neither 'NCHW' nor 'NCHW<b>c' with a "
                         f"block b of 2 to 64 channels (e.g. 'NCHW16c', AVX-512's float32 lanes)")
    return int(m.group(1))


def block_weight(w, cb, kb):
    """A conv weight (K, C, R, S) as conv2d_nchwc's (K / kb, C / cb, R, S, cb, kb)."""
    k, c, r, s = w.shape
    return np.ascontiguousarray(
        w.reshape(k // kb, kb, c // cb, cb, r, s).transpose(0, 2, 4, 5, 3, 1))


def input_block(c, block):
    """The channel block of a convolution's NCHW input of `c` channels: `block` where it divides
    them, else the largest divisor of c up to `block` (the RGB input: one block of 3)."""
    return max(d for d in range(1, min(c, block) + 1) if c % d == 0)


class Blocked:
    """The layout state of one import: which ONNX values have a blocked twin."""

    def __init__(self, block):
        self.block = block
        self.of = {}  # ONNX value name -> its blocked value's name

    def nchw_shape(self, ctx, name):
        """The NCHW shape of a value, blocked or not."""
        if name in ctx.values:
            return ctx.values[name].shape
        s = ctx.values[self.of[name]].shape
        return (s[0], s[1] * s[4], s[2], s[3])

    def _runtime(self, ctx, n):
        return [i for i in n.inputs if i and not ctx.is_const(i)]

    def keeps_layout(self, ctx, n):
        """Whether node `n` runs on the blocked twins of its inputs."""
        runtime = self._runtime(ctx, n)
        if not runtime or not all(i in self.of for i in runtime):
            return False
        scalars = all(ctx.const(i).size == 1 for i in n.inputs if i and ctx.is_const(i))
        if n.op_type in UNARY or n.op_type in POOLS:
            return len(runtime) == 1 and scalars
        if n.op_type in BINARY:
            shapes = {ctx.values[self.of[i]].shape for i in runtime}
            return len(shapes) == 1 and scalars
        return False

    def blocked_conv(self, ctx, n):
        """Whether Conv node `n` runs as conv2d_nchwc: groups of 1, 2-D, a constant weight whose
        output channels divide into blocks."""
        if n.op_type != "Conv" or int(n.attrs.get("group", 1)) != 1 or len(n.inputs) < 2:
            return False
        w = n.inputs[1]
        if not ctx.is_const(w) or ctx.const(w).ndim != 4 or ctx.const(w).shape[0] % self.block:
            return False
        b = n.inputs[2] if len(n.inputs) > 2 and n.inputs[2] else None
        return (b is None or ctx.is_const(b)) and len(self.nchw_shape(ctx, n.inputs[0])) == 4

    def unblock_node(self, name):
        """(inputs, make, params, op_type) of the node making NCHW `name` of its blocked twin."""
        return [self.of[name]], lambda x: _op.nchwc_to_nchw(x), (), "NchwcToNchw"


def conv(ctx, n, blocked):
    """Conv `n` on blocked activations (Blocked.blocked_conv): its input's blocked twin, the
    weight and bias blocked as constants; the converter's (runtime inputs, make, params)."""
    x = n.inputs[0]
    w = ctx.const(n.inputs[1])
    b = n.inputs[2] if len(n.inputs) > 2 and n.inputs[2] else None
    stride, dil = _check_2d(ctx, n, "strides"), _check_2d(ctx, n, "dilations")
    pads = _pads(ctx, n, w.shape[2:], stride, dil)
    k, kb = w.shape[0], blocked.block
    cb = ctx.values[x].shape[4]
    wb = ctx.add_const(n, f"weight_nchw{cb}c", block_weight(w, cb, kb))
    runtime = [x, wb]
    if b is not None:
        runtime.append(ctx.add_const(n, "bias_blocked",
                                     np.ascontiguousarray(ctx.const(b).reshape(k // kb, kb))))

    # A float32 3 x 3 window of stride and dilation 1 runs by Winograd (its constant filters
    # transformed once: docs/operators.md, "Winograd").
    winograd = (tuple(w.shape[2:]) == (3, 3) and tuple(stride) == (1, 1) and tuple(dil) == (1, 1)
                and w.dtype == np.float32)

    def make(*t):
        if winograd:
            y = _op.conv2d_nchwc_winograd(t[0], t[1], padding=pads)
        else:
            y = _op.conv2d_nchwc(t[0], t[1], stride=stride, padding=pads, dilation=dil)
        if len(t) > 2:  # one element-wise stage reading b[ko, ki] (the default's epilogue)
            bias, c = t[2], y
            y = _ts.compute(c.shape, lambda i, ko, h, w_, ki: c[i, ko, h, w_, ki] + bias[ko, ki],
                            name="conv_bias")
        return y
    return runtime, make, ("nchwc_winograd" if winograd else "nchwc", stride, dil, pads)
