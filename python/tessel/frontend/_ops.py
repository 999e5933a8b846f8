"""ONNX operators onto `ts.op` calls: one converter per operator type (docs/models.md, "Operator
coverage"). A converter gets the import context and the node and returns
`(runtime_inputs, make, params)`: the names of the tensors the group reads at run time (constant
weights among them), a function building its tensor expression from placeholders of those, and
the parameters that, with the input shapes, identify the computation."""
import numpy as np

from .. import _tessel as _ts
from .. import op as _op
from ._fold import reshape_target


def _unary(fn):
    return lambda ctx, n: ([n.inputs[0]], lambda x: getattr(_op, fn)(x), ())


def _compute_unary(intrinsic):
    def conv(ctx, n):
        def make(x):
            f = getattr(_ts, intrinsic)
            return _ts.compute(x.shape, lambda *i: f(x[i]), name=intrinsic)
        return [n.inputs[0]], make, ()
    return conv


def gelu(ctx, n):
    approx = n.attrs.get("approximate", "none")
    approx = approx.decode() if isinstance(approx, bytes) else approx
    if approx == "tanh":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        def make(x):
            def f(*i):
                v = x[i]
                return 0.5 * v * (1.0 + _ts.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
            return _ts.compute(x.shape, f, name="gelu_tanh")
        return [n.inputs[0]], make, (approx,)
    if approx != "none":
        ctx.fail(n, f"approximate='{approx}' is not an ONNX value")
    return [n.inputs[0]], lambda x: _op.gelu(x), (approx,)


def _binary(fn):
    return lambda ctx, n: (n.inputs[:2], lambda a, b: getattr(_op, fn)(a, b), ())


def _broadcast_read(x, shape, out):
    """x's element at the output index i (numpy broadcasting: x's axes aligned right, extents of
    1 read at 0)."""
    lead = len(out) - len(shape)
    return lambda i: x[tuple(0 if shape[k] == 1 and out[lead + k] != 1 else i[lead + k]
                             for k in range(len(shape)))]


def _logical(fn, name, arity=2):
    """A comparison or logical operator (bool result) of broadcast inputs: ONNX's Equal, Less,
    Greater (and ..OrEqual), And, Or, Not, IsNaN."""
    def conv(ctx, n):
        shapes = [tuple(ctx.shape(i)) for i in n.inputs[:arity]]
        out = tuple(int(d) for d in np.broadcast_shapes(*shapes))

        def make(*xs):
            reads = [_broadcast_read(x, s, out) for x, s in zip(xs, shapes)]
            return _ts.compute(out, lambda *i: fn(*(r(i) for r in reads)), name=name)
        return n.inputs[:arity], make, ()
    return conv


def _pads(ctx, n, kernel, stride, dilation):
    """ONNX's pads (top, left, bottom, right: tessel's order too), or those auto_pad implies."""
    auto = n.attrs.get("auto_pad", "NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto == "VALID":
        return [0, 0, 0, 0]
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        size = ctx.shape(n.inputs[0])[2:]
        begin, end = [], []
        for x, k, s, d in zip(size, kernel, stride, dilation):
            total = max((-(-x // s) - 1) * s + (k - 1) * d + 1 - x, 0)
            small = total // 2
            begin.append(small if auto == "SAME_UPPER" else total - small)
            end.append(total - begin[-1])
        return begin + end
    if auto != "NOTSET":
        ctx.fail(n, f"auto_pad={auto} is not an ONNX value")
    pads = [int(p) for p in n.attrs.get("pads", [0, 0, 0, 0])]
    if len(pads) != 4:
        ctx.fail(n, f"only 2-D is supported, pads={pads}")
    return pads


def _check_2d(ctx, n, key, default=1):
    v = [int(x) for x in n.attrs.get(key, [default, default])]
    if len(v) != 2:
        ctx.fail(n, f"only 2-D is supported, {key}={v}")
    return v


def conv(ctx, n):
    x, w = n.inputs[0], n.inputs[1]
    b = n.inputs[2] if len(n.inputs) > 2 and n.inputs[2] else None
    xs, ws = ctx.shape(x), ctx.shape(w)
    if len(xs) != 4:
        ctx.fail(n, f"only 2-D convolutions (NCHW) are supported, input of rank {len(xs)}")
    stride, dil = _check_2d(ctx, n, "strides"), _check_2d(ctx, n, "dilations")
    pads = _pads(ctx, n, ws[2:], stride, dil)
    group = int(n.attrs.get("group", 1))
    depthwise = group > 1 and group == xs[1] and ws[1] == 1

    def make(*t):
        if depthwise:
            y = _op.depthwise_conv2d_nchw(t[0], t[1], stride=stride, padding=pads, dilation=dil)
        else:
            y = _op.conv2d_nchw(t[0], t[1], stride=stride, padding=pads, dilation=dil,
                                groups=group)
        if len(t) > 2:  # one element-wise stage reading b[k] (the default schedule's epilogue)
            b, c = t[2], y
            y = _ts.compute(c.shape, lambda i, k, h, w_: c[i, k, h, w_] + b[k], name="conv_bias")
        return y
    return [x, w] + ([b] if b else []), make, (stride, dil, pads, group)


def gemm(ctx, n):
    a, b = n.inputs[0], n.inputs[1]
    c = n.inputs[2] if len(n.inputs) > 2 and n.inputs[2] else None
    alpha, beta = float(n.attrs.get("alpha", 1.0)), float(n.attrs.get("beta", 1.0))
    ta, tb = int(n.attrs.get("transA", 0)), int(n.attrs.get("transB", 0))
    if ctx.is_const(b) and not ta:
        wv = ctx.const(b)
        w = ctx.add_const(n, "weight", (wv if tb else wv.T) * np.float32(alpha)
                          if alpha != 1.0 else (wv if tb else wv.T))
        bias = None
        if c is not None and ctx.is_const(c):
            cv = ctx.const(c).astype(np.float32) * np.float32(beta)
            nout = ctx.shape(w)[0]
            if cv.size in (1, nout):
                bias = ctx.add_const(n, "bias", np.broadcast_to(cv.reshape(-1), (nout,)).copy())
        if c is None or bias is not None:
            def make(*t):
                return _op.dense(t[0], t[1], t[2] if len(t) > 2 else None)
            return [a, w] + ([bias] if bias else []), make, ()
    if alpha != 1.0 or (c is not None and beta != 1.0):
        ctx.fail(n, "alpha/beta other than 1 need a constant B (and C)")

    def make(*t):
        y = _op.matmul(t[0], t[1], transpose_a=bool(ta), transpose_b=bool(tb))
        return _op.add(y, t[2]) if len(t) > 2 else y
    return [a, b] + ([c] if c else []), make, (ta, tb)


def matmul(ctx, n):
    a, b = n.inputs
    sa, sb = ctx.shape(a), ctx.shape(b)
    if len(sa) < 2 or len(sb) < 2:
        ctx.fail(n, f"operands of rank < 2 are not supported ({list(sa)} x {list(sb)})")
    m, k = sa[-2], sa[-1]
    if len(sb) == 2 and ctx.is_const(b):
        w = ctx.add_const(n, "weight", np.ascontiguousarray(ctx.const(b).T))
        nout, lead = sb[1], sa[:-1]
        bias = [n.bias] if getattr(n, "bias", None) else []  # a folded Add (_onnx.py)

        def make(x, wt, *bt):  # (rows, N): a reshape after the product would hide it from
            # the default schedule's rules; the model's shape is a view (VIEW_SHAPE) of it
            return _op.dense(_op.reshape(x, (int(np.prod(lead)), k), name="rows"), wt,
                             bt[0] if bt else None)
        return [a, w] + bias, make, (len(bias),), tuple(lead) + (nout,)
    ba, bb = sa[:-2], sb[:-2]
    nb_a, nb_b = int(np.prod(ba)), int(np.prod(bb))
    if ba != bb and nb_b != 1:
        ctx.fail(n, f"batch dimensions {list(ba)} and {list(bb)} must be equal or b's be 1")
    out = tuple(ba) + (m, sb[-1])

    def make(x, y):
        x3 = _op.reshape(x, (nb_a, m, k), name="a3")
        y3 = _op.reshape(y, (nb_b, k, sb[-1]), name="b3")
        return _op.batch_matmul(x3, y3)
    return [a, b], make, (), out


def batch_norm(ctx, n):
    if int(n.attrs.get("training_mode", 0)):
        ctx.fail(n, "training_mode=1 is not supported (inference only)")
    eps = float(n.attrs.get("epsilon", 1e-5))
    return n.inputs[:5], lambda x, g, b, m, v: _op.batch_norm(x, g, b, m, v, eps=eps), (eps,)


def clip(ctx, n):
    lo = ctx.const(n.inputs[1]).item() if len(n.inputs) > 1 and n.inputs[1] else -3.4e38
    hi = ctx.const(n.inputs[2]).item() if len(n.inputs) > 2 and n.inputs[2] else 3.4e38
    return [n.inputs[0]], lambda x: _op.clip(x, float(lo), float(hi)), (lo, hi)


def pool(kind):
    def conv_(ctx, n):
        if len(ctx.shape(n.inputs[0])) != 4 and not ctx.is_blocked(n.inputs[0]):
            ctx.fail(n, "only 2-D pooling (NCHW) is supported")
        window = _check_2d(ctx, n, "kernel_shape")
        stride = _check_2d(ctx, n, "strides")
        if int(n.attrs.get("ceil_mode", 0)):
            ctx.fail(n, "ceil_mode=1 is not supported")
        if _check_2d(ctx, n, "dilations") != [1, 1]:
            ctx.fail(n, "dilated pooling is not supported")
        pads = _pads(ctx, n, window, stride, [1, 1])
        cip = bool(n.attrs.get("count_include_pad", 0))

        def make(x):
            return _op.pool2d(x, kind, window, stride=stride, padding=pads, count_include_pad=cip)
        return [n.inputs[0]], make, (window, stride, pads, cip)
    return conv_


def _reshape_to(shape):
    return lambda x: _op.reshape(x, tuple(shape))


def reshape(ctx, n):
    try:
        out = reshape_target(ctx.shape(n.inputs[0]), ctx.const(n.inputs[1]).tolist(),
                             n.attrs.get("allowzero", 0))
    except ValueError as e:
        ctx.fail(n, str(e))
    return [n.inputs[0]], _reshape_to(out), (tuple(out),)


def flatten(ctx, n):
    s = ctx.shape(n.inputs[0])
    axis = int(n.attrs.get("axis", 1))
    axis = axis + len(s) if axis < 0 else axis  # [-r, r]: -1 is r - 1
    out = (int(np.prod(s[:axis])), int(np.prod(s[axis:])))
    return [n.inputs[0]], _reshape_to(out), (out,)


def _axes_of(ctx, n, rank):
    axes = n.attrs.get("axes")
    if axes is None and len(n.inputs) > 1 and n.inputs[1]:
        axes = ctx.const(n.inputs[1]).tolist()
    return None if axes is None else [int(a) % rank for a in np.atleast_1d(axes)]


def unsqueeze(ctx, n):
    s = list(ctx.shape(n.inputs[0]))
    axes = n.attrs.get("axes")
    axes = ctx.const(n.inputs[1]).tolist() if axes is None else axes
    rank = len(s) + len(np.atleast_1d(axes))
    for a in sorted(int(a) % rank for a in np.atleast_1d(axes)):
        s.insert(a, 1)
    return [n.inputs[0]], _reshape_to(s), (tuple(s),)


def squeeze(ctx, n):
    s = ctx.shape(n.inputs[0])
    axes = _axes_of(ctx, n, len(s))
    out = [d for i, d in enumerate(s) if not (d == 1 and (axes is None or i in axes))]
    return [n.inputs[0]], _reshape_to(out), (tuple(out),)


def transpose(ctx, n):
    perm = n.attrs.get("perm")
    perm = None if perm is None else [int(p) for p in perm]
    return [n.inputs[0]], lambda x: _op.transpose(x, perm), (perm,)


def softmax(ctx, n):
    axis = int(n.attrs.get("axis", -1))
    return [n.inputs[0]], lambda x: _op.softmax(x, axis=axis), (axis,)


def layer_norm(ctx, n):
    rank = len(ctx.shape(n.inputs[0]))
    if int(n.attrs.get("axis", -1)) % rank != rank - 1:
        ctx.fail(n, "only normalisation over the last axis is supported")
    eps = float(n.attrs.get("epsilon", 1e-5))
    ins = [i for i in n.inputs[:3] if i]
    if len(ins) != 3:
        ctx.fail(n, "a LayerNormalization without Scale and B is not supported")
    return ins, lambda x, g, b: _op.layer_norm(x, g, b, eps=eps), (eps,)


def gather(ctx, n):
    data, idx = n.inputs
    axis = int(n.attrs.get("axis", 0)) % len(ctx.shape(data))
    if ctx.is_const(idx):  # ONNX allows negative indices; take clips, so normalise them here
        iv = ctx.const(idx)
        iv = np.where(iv < 0, iv + ctx.shape(data)[axis], iv).astype(iv.dtype)
        idx = ctx.add_const(n, "indices", iv)
    return [data, idx], lambda x, i: _op.take(x, i, axis=axis), (axis,)


def concat(ctx, n):
    axis = int(n.attrs["axis"]) % len(ctx.shape(n.inputs[0]))
    return list(n.inputs), lambda *xs: _op.concatenate(list(xs), axis=axis), (axis,)


def slice_(ctx, n):
    s = ctx.shape(n.inputs[0])
    starts, ends = ctx.const(n.inputs[1]).tolist(), ctx.const(n.inputs[2]).tolist()
    has = [len(n.inputs) > i and n.inputs[i] for i in range(5)]
    axes = ctx.const(n.inputs[3]).tolist() if has[3] else list(range(len(starts)))
    steps = ctx.const(n.inputs[4]).tolist() if has[4] else [1] * len(starts)
    begin, step, out = [0] * len(s), [1] * len(s), list(s)
    for st, en, ax, sp in zip(starts, ends, axes, steps):
        ax = int(ax) % len(s)
        if sp == 0:
            ctx.fail(n, "a step of 0")
        r = range(s[ax])[slice(int(st), int(en), int(sp))]
        begin[ax], step[ax], out[ax] = (r.start if len(r) else 0), int(sp), len(r)

    def make(x):
        return _ts.compute(tuple(out), lambda *i: x[tuple(begin[d] + step[d] * i[d]
                                                          for d in range(len(s)))], name="slice")
    return [n.inputs[0]], make, (tuple(begin), tuple(step), tuple(out))


def cast(ctx, n):
    dt = ctx.np_dtype(n.attrs["to"])
    return [n.inputs[0]], lambda x: _op.cast(x, dt), (dt,)


def reduce_mean(ctx, n):
    rank = len(ctx.shape(n.inputs[0]))
    axes = _axes_of(ctx, n, rank)
    keep = bool(n.attrs.get("keepdims", 1))
    if axes is None and int(n.attrs.get("noop_with_empty_axes", 0)):
        return [n.inputs[0]], lambda x: _op.reshape(x, tuple(ctx.shape(n.inputs[0]))), ()
    axes = list(range(rank)) if axes is None else axes
    return [n.inputs[0]], lambda x: _op.mean(x, axis=axes, keepdims=keep), (tuple(axes), keep)


def expand(ctx, n):
    s = ctx.shape(n.inputs[0])
    out = list(np.broadcast_shapes(tuple(s), tuple(int(d) for d in ctx.const(n.inputs[1]))))
    off = len(out) - len(s)

    def make(x):
        return _ts.compute(tuple(out), lambda *i: x[tuple(0 if s[d] == 1 else i[d + off]
                                                          for d in range(len(s)))],
                           name="expand")
    return [n.inputs[0]], make, (tuple(out),)


CONVERTERS = {
    "Conv": conv,
    "Gemm": gemm,
    "MatMul": matmul,
    "BatchNormalization": batch_norm,
    "Relu": _unary("relu"),
    "Sigmoid": _unary("sigmoid"),
    "Tanh": _unary("tanh"),
    "Exp": _unary("exp"),
    "Log": _unary("log"),
    "Sqrt": _unary("sqrt"),
    "Abs": _unary("abs"),
    "Neg": _unary("negative"),
    "Erf": _compute_unary("erf"),
    "Gelu": gelu,
    "Clip": clip,
    "Add": _binary("add"),
    "Sub": _binary("subtract"),
    "Mul": _binary("multiply"),
    "Div": _binary("divide"),
    "Pow": _binary("power"),
    "Max": _binary("maximum"),
    "Min": _binary("minimum"),
    "Where": lambda ctx, n: (n.inputs[:3], lambda c, a, b: _op.where(c, a, b), ()),
    "Equal": _logical(lambda a, b: a == b, "equal"),
    "Less": _logical(lambda a, b: a < b, "less"),
    "LessOrEqual": _logical(lambda a, b: a <= b, "less_equal"),
    "Greater": _logical(lambda a, b: a > b, "greater"),
    "GreaterOrEqual": _logical(lambda a, b: a >= b, "greater_equal"),
    "And": _logical(lambda a, b: a & b, "logical_and"),
    "Or": _logical(lambda a, b: a | b, "logical_or"),
    "Not": _logical(lambda a: ~a, "logical_not", 1),
    "IsNaN": _logical(_ts.isnan, "isnan", 1),
    "GlobalAveragePool": lambda ctx, n: ([n.inputs[0]], lambda x: _op.global_pool2d(x, "avg"), ()),
    "GlobalMaxPool": lambda ctx, n: ([n.inputs[0]], lambda x: _op.global_pool2d(x, "max"), ()),
    "MaxPool": pool("max"),
    "AveragePool": pool("avg"),
    "Flatten": flatten,
    "Reshape": reshape,
    "Transpose": transpose,
    "Softmax": softmax,
    "LayerNormalization": layer_norm,
    "Gather": gather,
    "Concat": concat,
    "Slice": slice_,
    "Unsqueeze": unsqueeze,
    "Squeeze": squeeze,
    "Cast": cast,
    "ReduceMean": reduce_mean,
    "Expand": expand,
}

# The fusion rules, as data (in the spirit of TVM's FuseOps): an element-wise node joins the group
# that produces one of its inputs when it is that tensor's only reader and
#  - the group is an element-wise chain (ELEMENTWISE): any element-wise node joins it;
#  - the group is a convolution or a matrix product (COMPUTE_HEAVY): a node of one run-time input
#    joins it (an activation: the default schedules compute it inside the product's tiles; an
#    epilogue reading a second tensor through ts.op's broadcasting binary operators is not one
#    they recognise, and costs 10x: biases are folded into the product's own stage instead).
ELEMENTWISE = {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Abs", "Neg", "Erf", "Gelu",
               "Clip", "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Where", "Cast",
               "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Not",
               "IsNaN"}
COMPUTE_HEAVY = {"Conv", "Gemm", "MatMul"}
# Reshapes: the compiled model runs no kernel for them (a view of the input's buffer).
VIEWS = {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}


def fuses_into(producer_op, consumer_op, consumer_runtime_inputs):
    """Whether a consumer node joins its producer's group (the rules above)."""
    if consumer_op not in ELEMENTWISE:
        return False
    if producer_op in ELEMENTWISE:
        return True
    return producer_op in COMPUTE_HEAVY and consumer_runtime_inputs == 1
