"""Constant folding at import: ONNX nodes whose inputs are all constants (shape subgraphs: Shape,
Gather, Concat, Unsqueeze, ... feeding a Reshape) are evaluated on their numpy values, so the
model graph keeps only computations on run-time tensors. Only small index arithmetic folds here;
an operator that is not listed stays a node of the graph even on constant inputs."""
import numpy as np

_FOLD_LIMIT = 1 << 24  # elements: folding is for shapes and small tables, not for weights


def _axes(attrs, ins, rank, pos=1):
    axes = attrs.get("axes")
    if axes is None and len(ins) > pos and ins[pos] is not None:
        axes = ins[pos].tolist()
    return None if axes is None else [int(a) % rank for a in np.atleast_1d(axes)]


def _unsqueeze(attrs, ins):
    x = ins[0]
    axes = sorted(int(a) % (x.ndim + len(_raw_axes(attrs, ins)))
                  for a in _raw_axes(attrs, ins))
    for a in axes:
        x = np.expand_dims(x, a)
    return x


def _raw_axes(attrs, ins):
    axes = attrs.get("axes")
    if axes is None:
        axes = ins[1].tolist()
    return list(np.atleast_1d(axes))


def _squeeze(attrs, ins):
    axes = _axes(attrs, ins, ins[0].ndim)
    return np.squeeze(ins[0], axis=None if axes is None else tuple(axes))


def _slice(attrs, ins):
    x = ins[0]
    starts, ends = ins[1].tolist(), ins[2].tolist()
    axes = ins[3].tolist() if len(ins) > 3 and ins[3] is not None else list(range(len(starts)))
    steps = ins[4].tolist() if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
    idx = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        idx[int(a) % x.ndim] = slice(int(s), int(e), int(st))
    return x[tuple(idx)]


def _div(attrs, ins):
    a, b = ins
    if np.issubdtype(a.dtype, np.integer):
        return (np.trunc(a / b)).astype(a.dtype)
    return a / b


def _const_of_shape(attrs, ins):
    v = attrs.get("value")
    v = np.zeros(1, np.float32) if v is None else v
    return np.full([int(d) for d in ins[0]], v.reshape(-1)[0], dtype=v.dtype)


def _gather(attrs, ins):
    x, idx = ins
    axis = int(attrs.get("axis", 0)) % x.ndim
    idx = np.where(idx < 0, idx + x.shape[axis], idx)
    return np.take(x, idx, axis=axis)


def _gather_elements(attrs, ins):
    """ONNX GatherElements: out[..., i, ...] = x[..., idx[..., i, ...], ...] along `axis`; the
    index's other extents may be smaller than x's."""
    x, idx = ins
    axis = int(attrs.get("axis", 0)) % x.ndim
    if idx.ndim != x.ndim:
        raise ValueError(f"index of rank {idx.ndim} for data of rank {x.ndim}")
    idx = np.where(idx < 0, idx + x.shape[axis], idx)
    if idx.size and (idx.min() < 0 or idx.max() >= x.shape[axis]):
        raise ValueError(f"an index outside [0, {x.shape[axis]})")
    part = tuple(slice(None) if d == axis else slice(0, idx.shape[d]) for d in range(x.ndim))
    return np.take_along_axis(x[part], idx, axis=axis)


def _reshape(attrs, ins):
    return ins[0].reshape(reshape_target(ins[0].shape, ins[1].tolist(),
                                         attrs.get("allowzero", 0)))


def reshape_target(shape, target, allowzero=0):
    """ONNX Reshape's output shape: 0 copies the input's extent (unless allowzero), -1 infers."""
    out = [shape[i] if (d == 0 and not allowzero) else int(d) for i, d in enumerate(target)]
    if out.count(-1) > 1:
        raise ValueError("more than one -1 in the target shape")
    if -1 in out:
        known = int(np.prod([d for d in out if d != -1]))
        total = int(np.prod(shape))
        if known == 0 or total % known:
            raise ValueError(f"cannot infer -1 of {target} for an input of shape {list(shape)}")
        out[out.index(-1)] = total // known
    if int(np.prod(out)) != int(np.prod(shape)):
        raise ValueError(f"target shape {target} holds another element count than {list(shape)}")
    return out


FOLDERS = {
    "Identity": lambda a, i: i[0],
    "Cast": lambda a, i: i[0].astype(a["to"]),
    "Gather": _gather,
    "GatherElements": _gather_elements,
    "Concat": lambda a, i: np.concatenate([np.atleast_1d(x) for x in i], axis=int(a["axis"])),
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
    "Reshape": _reshape,
    "Slice": _slice,
    "Add": lambda a, i: i[0] + i[1],
    "Sub": lambda a, i: i[0] - i[1],
    "Mul": lambda a, i: i[0] * i[1],
    "Div": _div,
    "Neg": lambda a, i: -i[0],
    "Equal": lambda a, i: i[0] == i[1],
    "Less": lambda a, i: i[0] < i[1],
    "LessOrEqual": lambda a, i: i[0] <= i[1],
    "Greater": lambda a, i: i[0] > i[1],
    "GreaterOrEqual": lambda a, i: i[0] >= i[1],
    "And": lambda a, i: np.logical_and(i[0], i[1]),
    "Or": lambda a, i: np.logical_or(i[0], i[1]),
    "Not": lambda a, i: np.logical_not(i[0]),
    "IsNaN": lambda a, i: np.isnan(i[0]),
    "Where": lambda a, i: np.where(i[0], i[1], i[2]),
    "Range": lambda a, i: np.arange(i[0], i[1], i[2]).astype(i[0].dtype),
    "ConstantOfShape": _const_of_shape,
    "Expand": lambda a, i: i[0] * np.ones([int(d) for d in i[1]], dtype=i[0].dtype),
    "Transpose": lambda a, i: np.transpose(i[0], a.get("perm")),
    "Sqrt": lambda a, i: np.sqrt(i[0]),
    "ReduceProd": lambda a, i: np.prod(i[0], keepdims=bool(a.get("keepdims", 1))),
}


def _output_size(op_type, ins):
    """The element count of the operators whose output can be far larger than their inputs,
    computed before anything is allocated (a hostile model asks for 2^40 zeros)."""
    if op_type == "ConstantOfShape":
        return int(np.prod([max(int(d), 0) for d in ins[0]], dtype=object))
    if op_type == "Expand":
        shape = np.broadcast_shapes(ins[0].shape, tuple(max(int(d), 0) for d in ins[1]))
        return int(np.prod(shape, dtype=object))
    if op_type == "Range":
        start, limit, delta = (float(np.asarray(x).reshape(-1)[0]) for x in ins)
        return 0 if delta == 0 else max(int(np.ceil((limit - start) / delta)), 0)
    return 0


def fold(op_type, attrs, inputs):
    """The numpy value of an ONNX node on constant inputs, or None when it does not fold."""
    f = FOLDERS.get(op_type)
    if f is None or sum(int(np.asarray(x).size) for x in inputs if x is not None) > _FOLD_LIMIT:
        return None
    if _output_size(op_type, inputs) > _FOLD_LIMIT:
        raise ValueError(f"its output would hold more than {_FOLD_LIMIT} elements")
    out = np.asarray(f(attrs, inputs))
    if out.size > _FOLD_LIMIT:
        return None
    return out
